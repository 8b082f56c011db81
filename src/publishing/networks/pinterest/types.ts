/**
 * The shapes Seedcast reads and writes at Pinterest's API v5, typed by hand from Pinterest's OpenAPI description
 * (test/peers/platform-specs/pinterest-v5.openapi.json; each interface names the schema it follows). Only the fields
 * used are typed; the stand-in (test/peers/pinterest/server.ts) validates every request against the full description.
 */

/** `ContentType` of a base64 image source. */
export type PinImageType = "image/jpeg" | "image/png";

/** `PinMediaSourceImageBase64`. */
export interface PinMediaSourceImageBase64 {
  source_type: "image_base64";
  content_type: PinImageType;
  data: string;
}

/** `PinMediaSourceImagesBase64` (a carousel: 2 to 5 items of `PinMediaSourceImagesBase64Item`). */
export interface PinMediaSourceImagesBase64 {
  source_type: "multiple_image_base64";
  items: { content_type: PinImageType; data: string; title?: string; description?: string; link?: string }[];
}

/** `PinCreate` (POST /v5/pins): title at most 100, description 800 (decisions.md §13 holds it to 500), alt_text 500. */
export interface PinCreate {
  board_id: string;
  media_source: PinMediaSourceImageBase64 | PinMediaSourceImagesBase64;
  title?: string;
  description?: string;
  alt_text?: string;
}

/** `Pin` (the fields read back). */
export interface Pin {
  id: string;
  board_id?: string;
  title?: string | null;
  description?: string | null;
  alt_text?: string | null;
  created_at?: string;
}

/** `Board` (the fields read). */
export interface Board {
  id: string;
  name: string;
  privacy?: "PUBLIC" | "PROTECTED" | "SECRET";
}

/** `Account` (GET /v5/user_account, the fields read). */
export interface Account {
  id?: string;
  username?: string;
  account_type?: "PINNER" | "BUSINESS";
}

/** `Error`: Pinterest's error answer. */
export interface PinterestError {
  code: number;
  message: string;
}

/** A page of a list (`Paginated`): `items` and the `bookmark` of the next page (null at the end). */
export interface Page<T> {
  items: T[];
  bookmark?: string | null;
}
