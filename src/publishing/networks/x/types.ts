/**
 * The shapes Seedcast reads and writes at X's API v2, typed by hand from X's OpenAPI description
 * (/work/shared/platform-specs/x-api-v2.openapi.json; each interface names the schema it follows). Only the fields
 * used are typed; the stand-in (test/peers/x/server.ts) validates every request against the full description.
 */

/** `MediaUploadRequest` (POST /2/media/upload, JSON body: the media base64-encoded). */
export interface MediaUploadRequest {
  media: string;
  media_category: "tweet_image" | "tweet_gif";
}

/** `MediaUploadResponse`. */
export interface MediaUploadResponse {
  data?: { id: string; media_key?: string; size?: number; expires_after_secs?: number };
  errors?: Problem[];
}

/** `CreateMediaMetadataRequest` (POST /2/media/metadata): alt text is `metadata.alt_text.text`, at most 1,000 characters. */
export interface CreateMediaMetadataRequest {
  id: string;
  metadata: { alt_text: { text: string } };
}

/** `CreatePostsRequest` (POST /2/tweets). */
export interface CreatePostsRequest {
  text: string;
  media?: { media_ids: string[] };
  reply?: { in_reply_to_tweet_id: string };
}

/** `CreatePostsResponse`. */
export interface CreatePostsResponse {
  data?: { id: string; text: string };
  errors?: Problem[];
}

/** `GetUsersMeResponse` (GET /2/users/me). */
export interface GetUsersMeResponse {
  data?: { id: string; name?: string; username: string };
  errors?: Problem[];
}

/** `Post`, as GET /2/users/{id}/tweets lists it with `post.fields=created_at,conversation_id`. */
export interface Post {
  id: string;
  text: string;
  created_at?: string;
  conversation_id?: string;
}

/** `GetUsersPostsResponse`. */
export interface GetUsersPostsResponse {
  data?: Post[];
  meta?: { result_count?: number; next_token?: string };
  errors?: Problem[];
}

/** `Problem` (RFC 7807) and the older `Error` shape, as error answers carry them. */
export interface Problem {
  type?: string;
  title?: string;
  detail?: string;
  status?: number;
  message?: string;
  errors?: { message?: string }[];
}
