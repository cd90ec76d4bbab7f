// Types of glibc-malloc.mjs (plain JavaScript, for bin/atelier), for the TypeScript that reads it.
export declare const glibcMalloc: Readonly<{
  MALLOC_ARENA_MAX: string;
  MALLOC_MMAP_THRESHOLD_: string;
}>;
export declare function withGlibcMalloc(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv | undefined;
