export type ElementKind = 'character' | 'object' | 'style' | 'scene';

/** A reusable ingredient of a generation: a character, object, style or scene. */
export interface ElementDefinition {
  readonly elementId: string;
  readonly kind: ElementKind;
  readonly name: string;
  readonly description: string | null;
  /** Null for the shared library; the owner's account otherwise. */
  readonly accountId: string | null;
  /** SVG source of the element's picture (built-in library elements). */
  readonly svg: string | null;
  /** The element's picture and preview: the account's image for own elements. */
  readonly previewMediaId: string | null;
  readonly createdAt: Date;
}

/** A picture of an element named in a request (SVG or raster bytes), as engines take it. */
export interface ElementPicture {
  readonly kind: ElementKind;
  readonly picture: Buffer;
}
