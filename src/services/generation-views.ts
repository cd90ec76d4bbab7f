import type { SignedUrl } from '../domain/media.ts';
import type { ContentRow } from '../store/content.store.ts';
import type { MediaRow } from '../store/media.store.ts';
import type { TaskRow } from '../store/task-queue.store.ts';

/** What clients see of a task (contract `Task`). */
export interface TaskView {
  readonly taskId: string;
  readonly contentId: string;
  readonly status: TaskRow['status'];
  readonly finishCode: number | null;
  readonly finishMessage: string | null;
  readonly progress: number;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  /** On a live update: its place in the task event log, to resume after (`after`). */
  readonly cursor?: string | null;
}

/** What clients see of a media file (contract `Media`); `download` is signed at every read. */
export interface MediaView {
  readonly mediaId: string;
  readonly kind: MediaRow['kind'];
  readonly mimeType: string;
  readonly bytes: number;
  readonly width: number | null;
  readonly height: number | null;
  readonly durationMs: number | null;
  readonly download: SignedUrl;
}

/** A generation with its task and media (contract `Content`). */
export interface ContentView {
  readonly contentId: string;
  readonly kind: ContentRow['kind'];
  readonly modelId: string;
  readonly input: unknown;
  readonly task: TaskView;
  readonly media: readonly MediaView[];
  readonly creditsCharged: number;
  readonly creditsRefunded: number;
  readonly idempotencyKey: string | null;
  readonly createdAt: Date;
}

/** What a task view is made of: a task row, or a task as its event log recorded it. */
export type TaskViewSource = Pick<
  TaskRow,
  | 'id'
  | 'content_id'
  | 'status'
  | 'finish_code'
  | 'finish_message'
  | 'progress'
  | 'created_at'
  | 'started_at'
  | 'finished_at'
>;

export function toTaskView(task: TaskViewSource): TaskView {
  return {
    taskId: task.id,
    contentId: task.content_id,
    status: task.status,
    finishCode: task.finish_code,
    finishMessage: task.finish_message,
    progress: task.progress,
    createdAt: task.created_at,
    startedAt: task.started_at,
    finishedAt: task.finished_at,
  };
}

export function toMediaView(media: MediaRow, sign: (mediaId: string) => SignedUrl): MediaView {
  return {
    mediaId: media.id,
    kind: media.kind,
    mimeType: media.mime_type,
    bytes: media.bytes,
    width: media.width,
    height: media.height,
    durationMs: media.duration_ms,
    download: sign(media.id),
  };
}
