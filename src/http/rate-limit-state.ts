/**
 * What a key's token bucket tells its client, as the IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers,
 * the structured-field form of draft 08 and later): `RateLimit-Policy: "key";q=<limit>;w=60` (the quota a minute) and
 * `RateLimit: "key";r=<whole tokens left>;t=<seconds until the bucket is full again>`. The bucket refills
 * continuously, so `t` is when the whole quota is back, and `r` what may be spent at once now.
 */

/** One bucket after a take (or a look): the wait (0: allowed), the whole tokens left, and seconds until full. */
export interface RateState {
  wait: number;
  remaining: number;
  resetSeconds: number;
}

/** The name of the per-key policy in the header fields. */
export const KEY_POLICY = "key";

/** The state of a bucket of `perMinute` holding `tokens` (fractional) after a take that had to `wait`. */
export function rateState(perMinute: number, tokens: number, wait: number): RateState {
  const missing = Math.max(0, perMinute - tokens);
  return { wait, remaining: Math.max(0, Math.floor(tokens)), resetSeconds: Math.ceil((missing * 60) / perMinute) };
}

/** The two header fields for `state` under a policy of `perMinute` a minute. */
export function rateLimitHeaders(perMinute: number, state: RateState): Record<string, string> {
  return {
    "ratelimit-policy": `"${KEY_POLICY}";q=${perMinute};w=60`,
    ratelimit: `"${KEY_POLICY}";r=${state.remaining};t=${state.resetSeconds}`,
  };
}
