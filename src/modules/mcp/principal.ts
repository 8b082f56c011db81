/**
 * Who calls a tool: the OAuth grant behind the access token (its member, account and effective groups, read at every
 * request). The authorization server module resolves it; this module only reads it.
 */
export type { OAuthPrincipal as McpPrincipal } from "../oauth/access-token";
