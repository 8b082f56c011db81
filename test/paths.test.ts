/** requestPath reads a Request's path as URL does, without building a URL; loggablePath hides upload tokens. */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { isApiPath, loggablePath, requestPath, requestSearch } from "../src/http/paths";

test("for any URL a Request can carry, requestPath and requestSearch are URL's pathname and search", () => {
  fc.assert(
    fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (url) => {
      const normalised = new Request(url).url;
      expect(requestPath(normalised)).toBe(new URL(normalised).pathname);
      expect(requestSearch(normalised)).toBe(new URL(normalised).search);
    }),
    { numRuns: 2000 },
  );
  for (const url of ["http://localhost/api/v1/../livez", "http://h:1/a/./b?x=/c", "http://h/", "http://h", "http://h/p?", "http://h//double", "http://h/p?a#b?c"]) {
    const normalised = new Request(url).url;
    expect(requestPath(normalised)).toBe(new URL(normalised).pathname);
    expect(requestSearch(normalised)).toBe(new URL(normalised).search);
  }
});

test("isApiPath is /api/v1 and below, nothing that merely starts alike", () => {
  expect(isApiPath("/api/v1")).toBe(true);
  expect(isApiPath("/api/v1/seeds")).toBe(true);
  expect(isApiPath("/api/v10")).toBe(false);
  expect(isApiPath("/api/v1seeds")).toBe(false);
  expect(isApiPath("/")).toBe(false);
});

test("an upload link's token never reaches the log", () => {
  expect(loggablePath("/upload/tok_secret123/file")).toBe("/upload/[redacted]/file");
  expect(loggablePath("/upload/tok_secret123")).toBe("/upload/[redacted]");
  expect(loggablePath("/api/v1/seeds")).toBe("/api/v1/seeds");
});
