import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { atelier } from '../../helpers/cli.ts';
import {
  comfyImageModel,
  comfyVideoModel,
  imageWorkflow,
  videoWorkflow,
} from '../../helpers/comfyui-models.ts';

// An operator's mistakes in a comfyui model stop the start, every one listed with its model,
// before anything is opened or contacted (no ComfyUI is needed to find them).

type Graph = Record<string, { class_type: string; inputs: Record<string, unknown> }>;

function badImageModel() {
  const workflow = imageWorkflow() as Graph;
  workflow['6']!.inputs.text = 'a photo, {{style}}'; // no {{prompt}}, an unknown marker
  workflow['3']!.inputs.seed = 'seed {{seed}}'; // a number marker inside a text
  workflow['5']!.inputs.batch_size = 1; // no {{count}}, yet maxCount 2
  workflow['7']!.inputs.text = '{{audio}}';
  const model = comfyImageModel('mdl_bad-image', '', { workflow, baseUrl: undefined });
  return { ...model, capabilities: { ...model.capabilities, formats: ['png', 'jpeg'] } };
}

function badVideoModel() {
  const workflow = videoWorkflow() as Graph;
  workflow['5']!.inputs = { width: 64, height: 48, batch_size: '{{frames}}' }; // a fixed size
  workflow['10']!.inputs.fps = 8;
  const model = comfyVideoModel('mdl_bad-video', 'http://gpu-box:8188');
  const format = model.capabilities.formats[0]!;
  return {
    ...model,
    engineOptions: { ...model.engineOptions, workflow },
    capabilities: {
      ...model.capabilities,
      modes: ['text', 'image'],
      formats: [format, { ...format, resolution: '720p', width: 1280, height: 720, fps: [24] }],
    },
  };
}

describe('bin/atelier serve with comfyui models it cannot use', () => {
  it('refuses to start, listing every problem of every model', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'atelier-comfy-config-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const dataDir = path.join(dir, 'data');
    const notJson = {
      ...comfyImageModel('mdl_bad-file', 'http://gpu-box:8188'),
      engineOptions: { baseUrl: 'http://gpu-box:8188', workflow: 'workflows/sdxl.json' },
    };
    const models = [badImageModel(), badVideoModel(), notJson];

    const result = await atelier(['serve'], {
      MODELS: JSON.stringify(models),
      DATA_DIR: dataDir,
      CONFIG_FILE: '',
    });

    assert.notEqual(result.code, 0);
    const problems = [
      'mdl_bad-image: engineOptions.baseUrl must be the http(s) URL of the ComfyUI server',
      'mdl_bad-image: workflow node 6.inputs.text: unknown marker {{style}}; an image model fills',
      'mdl_bad-image: workflow node 3.inputs.seed: {{seed}} must be the whole value',
      'mdl_bad-image: workflow node 7.inputs.text: unknown marker {{audio}} (image and video requests carry no audio)',
      'mdl_bad-image: workflow has no {{prompt}} marker: the prompt would go nowhere',
      'mdl_bad-image: workflow has no {{count}} marker, so it makes one image per run',
      "mdl_bad-image: ComfyUI's SaveImage writes PNG: the model cannot offer jpeg",
      'mdl_bad-video: workflow always makes 64x48 (no {{width}}/{{height}} markers), not 1280x720',
      'mdl_bad-video: the model offers image-to-video but the workflow has no {{image}} marker',
      'mdl_bad-video: the model offers 8, 24 fps but the workflow has no {{fps}}',
      'mdl_bad-file: engineOptions.workflow must be a ComfyUI workflow in API format (a JSON object)',
    ];
    for (const problem of problems)
      assert.ok(result.stderr.includes(problem), `${problem}\n${result.stderr}`);
    assert.equal(existsSync(dataDir), false, 'nothing was opened');
  });
});
