import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { glibcMalloc, withGlibcMalloc } from '../../scripts/glibc-malloc.mjs';

describe("bin/atelier's glibc malloc settings", () => {
  it('adds the settings a process lacks, and keeps everything else it has', () => {
    assert.deepEqual(withGlibcMalloc({ PORT: '8080' }), { ...glibcMalloc, PORT: '8080' });
  });

  it("keeps an operator's own value and adds only what is missing", () => {
    assert.deepEqual(withGlibcMalloc({ MALLOC_ARENA_MAX: '8' }), {
      MALLOC_ARENA_MAX: '8',
      MALLOC_MMAP_THRESHOLD_: glibcMalloc.MALLOC_MMAP_THRESHOLD_,
    });
  });

  it('asks for no restart when the process has them all, or glibc is tuned otherwise', () => {
    assert.equal(withGlibcMalloc({ ...glibcMalloc }), undefined);
    assert.equal(withGlibcMalloc({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=4' }), undefined);
  });
});
