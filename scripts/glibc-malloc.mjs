// glibc's malloc settings for Atelier's long-running processes (issue 34: memory that stays
// flat; docs/performance-runtime.md, "Memory after generations"). Plain JavaScript: bin/atelier
// reads it before anything else, and the Dockerfile sets the same values (a test checks).
//
// - MALLOC_ARENA_MAX=2: glibc gives each thread that allocates a malloc arena of its own (up to
//   8 a core) and keeps what is freed there; libuv's threads (and sharp's, when it ran in the
//   server) left 50-60 MiB in them.
// - MALLOC_MMAP_THRESHOLD_=65536: a block of 64 KiB or more gets pages of its own, given back
//   when it is freed. glibc starts at 128 KiB, but raises the threshold to the largest block
//   freed, after which big short-lived buffers (a video frame, a media file, an image from the
//   sharp worker) come from the main heap and leave it fragmented: it grew by about 50 MiB over
//   a thousand generations, and is never given back. 64 KiB also takes in Node's read buffers
//   (64 KiB for each read of a socket or pipe, then shrunk to what was read, whose small rest
//   stayed behind in the heap, splitting its free space): the heap grew 12 MiB over 300
//   generations of each kind with 64 KiB, 29 MiB with 128 KiB, and request rates did not move.
//
// glibc reads them once, as a process starts.

/** The settings, as environment variables. */
export const glibcMalloc = Object.freeze({
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '65536',
});

/**
 * The environment a process should restart with to have the settings, or undefined when it
 * has them already or the operator tunes glibc otherwise: their own values are kept, and
 * GLIBC_TUNABLES (glibc's newer form) is left alone.
 */
export function withGlibcMalloc(env) {
  if (env.GLIBC_TUNABLES !== undefined) return undefined;
  if (Object.keys(glibcMalloc).every((name) => env[name] !== undefined)) return undefined;
  return { ...glibcMalloc, ...env };
}
