import type SharpFactory from 'sharp';

let loading: Promise<typeof SharpFactory> | undefined;

/**
 * sharp (libvips), loaded at its first use: about 17 MiB resident that an idle server, or one
 * that never touches an image, does not need (issue 19: idle RSS). The one place it is loaded.
 */
export function loadSharp(): Promise<typeof SharpFactory> {
  loading ??= import('sharp').then((module) => module.default);
  return loading;
}
