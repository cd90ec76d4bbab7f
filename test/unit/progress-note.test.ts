import assert from 'node:assert/strict';
import { test } from 'node:test';
import { progressNote } from '../../src/edge/mcp/tools/wait-for-generation.tool.ts';

test('the first notification says where the task stands', () => {
  assert.deepEqual(progressNote({ status: 'queued', progress: 0 }, undefined), {
    progress: 0,
    message: 'queued',
  });
  assert.deepEqual(progressNote({ status: 'running', progress: 0.427 }, undefined), {
    progress: 0.427,
    message: 'running, 42%',
  });
});

test('then only a climb is sent: MCP progress must increase with each notification', () => {
  assert.equal(progressNote({ status: 'running', progress: 0 }, 0), null, 'queued → running at 0');
  assert.equal(progressNote({ status: 'running', progress: 0.3 }, 0.5), null);
  assert.deepEqual(progressNote({ status: 'running', progress: 0.6 }, 0.5), {
    progress: 0.6,
    message: 'running, 60%',
  });
});

test('at 1 a running task is finishing; a finished one says so', () => {
  assert.deepEqual(progressNote({ status: 'running', progress: 1 }, 0.9), {
    progress: 1,
    message: 'finishing',
  });
  assert.equal(progressNote({ status: 'finished', progress: 1 }, 1), null);
  assert.deepEqual(progressNote({ status: 'finished', progress: 1 }, 0.9), {
    progress: 1,
    message: 'finished',
  });
});
