export type MediaKind = 'image' | 'video' | 'audio';
