/**
 * Feed routes (decisions.md §14): POST /api/v1/feeds, DELETE /api/v1/feeds/{id} and POST /api/v1/feeds/{id}/poll
 * (Content creation group), GET /api/v1/feeds and GET /api/v1/feeds/{id} (Read access).
 */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { parseJsonBody } from "../../http/json-body";
import { authOf } from "../../http/request-context";
import { scopePlugin } from "../../http/scope";
import { createFeedBody, feedDeletedResponse, feedIdParams, feedListResponse, feedResponse, feedWithPollResponse } from "./model";
import { createFeed, deleteFeed, getFeed, listFeeds, pollFeedNow } from "./service";

const TAGS = ["feeds"];
/** The refusals of a feed's first read: the ingest's reasons, and not_a_feed. */
const READ_REFUSALS = [
  "invalid_url",
  "https_required",
  "port_not_allowed",
  "unsupported_encoding",
  "host_not_public",
  "host_unresolvable",
  "fetch_failed",
  "upstream_status",
  "too_many_redirects",
  "payload_too_large",
  "not_a_feed",
] as const;

/** Mounts the feed routes. */
export function feedsModule(deps: Deps) {
  return new Elysia()
    .use(scopePlugin)
    .post(
      "/api/v1/feeds",
      async ({ request, body, set }) => {
        const created = await createFeed(deps, authOf(request).accountId, body);
        set.status = 201;
        return created;
      },
      {
        parse: parseJsonBody,
        scope: "create",
        errors: [...READ_REFUSALS, "unknown_target", "ambiguous_target", "feed_exists"],
        created: { path: "/api/v1/feeds/{id}", idAt: "feed.id" },
        body: createFeedBody,
        response: { 201: feedWithPollResponse },
        detail: {
          summary: "Follow a feed (RSS 2.0, Atom or JSON Feed): read once now, then every 30 minutes",
          description:
            "The URL is read at once under the image ingest's outbound rules; a refused URL answers 400 with the ingest's reason, a document that is no feed 400 not_a_feed, and nothing is stored. " +
            "Each item not seen before (by guid, else link) becomes a seed: title, summary text, link, first image as image_url. The items of this first read become seeds only; " +
            "items that appear later also become a generated creation in draft mode (charged as generate; an account out of credits gets the seed and a credits.low event) " +
            "and, in queue mode, a post in the next free slot of `targets`. Reads send If-None-Match / If-Modified-Since. Five failed reads in a row pause the feed.",
          tags: TAGS,
        },
      },
    )
    .get("/api/v1/feeds", ({ request }) => listFeeds(deps, authOf(request).accountId), {
      scope: "read",
      response: { 200: feedListResponse },
      detail: { summary: "List the account's feeds, newest first, with their state", tags: TAGS },
    })
    .get("/api/v1/feeds/:id", ({ request, params }) => getFeed(deps, authOf(request).accountId, params.id), {
      scope: "read",
      errors: ["not_found"],
      params: feedIdParams,
      response: { 200: feedResponse },
      detail: { summary: "One feed: last read, state, and why it failed or was paused", tags: TAGS },
    })
    .delete("/api/v1/feeds/:id", ({ request, params }) => deleteFeed(deps, authOf(request).accountId, params.id), {
      parse: parseJsonBody,
      scope: "create",
      errors: ["not_found"],
      params: feedIdParams,
      response: { 200: feedDeletedResponse },
      detail: { summary: "Stop following a feed (the seeds, creations and posts it made stay)", tags: TAGS },
    })
    .post("/api/v1/feeds/:id/poll", ({ request, params }) => pollFeedNow(deps, authOf(request).accountId, params.id), {
      parse: parseJsonBody,
      scope: "create",
      errors: ["not_found", "feed_busy"],
      params: feedIdParams,
      response: { 200: feedWithPollResponse },
      detail: {
        summary: "Read a feed now; a paused feed resumes when this read succeeds",
        description:
          "Answers 200 whatever the read found: `poll.outcome` is read, not_modified (the server answered 304) or failed (with `poll.failure`; the failure counts towards the five that pause the feed). " +
          "409 feed_busy while another read of the same feed runs.",
        tags: TAGS,
      },
    });
}
