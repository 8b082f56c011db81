/**
 * Single-use upload links (decisions.md §4). The token in `uploadUrl` is the credential: 256 random bits, stored only
 * as an HMAC under the instance secret, bound to the minting account. A link is consumed by the first file that
 * passes every image check, atomically with the asset row; a refused file leaves it valid.
 */
import { and, eq, gt, isNull, lte, sql } from "drizzle-orm";
import type { Deps } from "../../deps";
import { accounts, uploadLinks } from "../../db/tables";
import { isoAt } from "../../lib/clock";
import { AppError, notFound } from "../../lib/errors";
import { newId, isUuid } from "../../lib/ids";
import { hmacHex } from "../../lib/instance-secret";
import { assetFileName } from "../assets/file-name";
import { type AssetRecord, checkImageBytes, storeImage } from "../assets/ingest";

/** Lifetime of a link unless its minter chooses another (interface.md: 900 seconds; decisions.md §15). */
export const UPLOAD_LINK_TTL_SECONDS = 900;
/** Path prefix of the page; `uploadUrl` is `{base_url}/upload/<token>`. */
export const UPLOAD_PATH = "/upload";
/** Links are deleted by the tidy job this long after they expired (used or not), so polling can still see them. */
export const UPLOAD_LINK_RETENTION_MS = 24 * 60 * 60 * 1000;
const TOKEN_BYTES = 32;
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
const HASH_CONTEXT = "upload-link:";

export type UploadLinkRecord = typeof uploadLinks.$inferSelect;
export type UploadLinkStatus = "valid" | "used" | "expired";

/** The link state at `now`: used wins over expired (a used link stays "used" after its expiry). */
export function linkStatus(link: Pick<UploadLinkRecord, "usedAt" | "expiresAt">, now: number): UploadLinkStatus {
  if (link.usedAt !== null) return "used";
  return now >= link.expiresAt ? "expired" : "valid";
}

function hashToken(deps: Deps, token: string): string {
  return hmacHex(deps.instanceSecret, HASH_CONTEXT + token);
}

/**
 * Mints a link for the account, usable for `ttlSeconds` (the callers check the bounds: 300 to 604,800 through the API).
 * The token is returned once, inside `uploadUrl`, and never stored.
 */
export async function createUploadLink(
  deps: Deps,
  accountId: string,
  keyId: string | null,
  ttlSeconds: number = UPLOAD_LINK_TTL_SECONDS,
): Promise<{ id: string; uploadUrl: string; expiresAt: string; expiresInSeconds: number; creditsCharged: 0 }> {
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(TOKEN_BYTES))).toString("base64url");
  const now = deps.clock.now();
  const link: UploadLinkRecord = {
    id: newId(),
    accountId,
    tokenHash: hashToken(deps, token),
    createdByKeyId: keyId,
    expiresAt: now + ttlSeconds * 1000,
    usedAt: null,
    assetId: null,
    createdAt: now,
  };
  await deps.store.write(async (tx) => {
    await tx.insert(uploadLinks).values(link).run();
  });
  return {
    id: link.id,
    uploadUrl: `${deps.config.baseUrl}${UPLOAD_PATH}/${token}`,
    expiresAt: isoAt(link.expiresAt),
    expiresInSeconds: ttlSeconds,
    creditsCharged: 0,
  };
}

/** The polling view of a link: `{id, status, assetId, expiresAt}`; 404 for missing or other-account ids. */
export async function getUploadLinkStatus(
  deps: Deps,
  accountId: string,
  id: string,
): Promise<{ id: string; status: UploadLinkStatus; assetId: string | null; expiresAt: string }> {
  const link = isUuid(id)
    ? await deps.store.db.select().from(uploadLinks).where(and(eq(uploadLinks.id, id), eq(uploadLinks.accountId, accountId))).get()
    : undefined;
  if (!link) throw notFound("upload link");
  return { id: link.id, status: linkStatus(link, deps.clock.now()), assetId: link.assetId, expiresAt: isoAt(link.expiresAt) };
}

/** The link a token belongs to, or null (also for tokens that cannot be ours). */
export async function findLinkByToken(deps: Deps, token: string): Promise<UploadLinkRecord | null> {
  if (!TOKEN_RE.test(token)) return null;
  return (await deps.store.db.select().from(uploadLinks).where(eq(uploadLinks.tokenHash, hashToken(deps, token))).get()) ?? null;
}

/** The refusal of a link whose account is disabled (a disabled account stores nothing). */
export const LINK_ACCOUNT_DISABLED = "This upload link belongs to a disabled account; it takes no file.";

/** Condition: the link's account is not disabled (checked again inside the consuming transaction). */
function linkAccountActive() {
  return sql`${uploadLinks.accountId} not in (select ${accounts.id} from ${accounts} where ${accounts.disabledAt} is not null)`;
}

/**
 * Throws the refusal for a link that cannot take a file now: 404 unknown, 410 used or expired, 403 when its account
 * is disabled.
 */
export async function assertLinkUsable(deps: Deps, link: UploadLinkRecord | null): Promise<UploadLinkRecord> {
  if (!link) throw new AppError("not_found", "This upload link does not exist.");
  const status = linkStatus(link, deps.clock.now());
  if (status === "used") throw new AppError("upload_link_used", "This upload link was already used; ask for a new one.");
  if (status === "expired") throw new AppError("upload_link_expired", "This upload link has expired; ask for a new one.");
  const account = await deps.store.db.select({ disabledAt: accounts.disabledAt }).from(accounts).where(eq(accounts.id, link.accountId)).get();
  if (!account || account.disabledAt !== null) throw new AppError("forbidden", LINK_ACCOUNT_DISABLED);
  return link;
}

/**
 * Delivers one file through the link named by `token`. Every image check runs first (a refusal leaves the link
 * valid); then the file is stored and, in one write transaction, the link is claimed with a conditional UPDATE
 * (unused and unexpired) and the asset row inserted. Of concurrent deliveries exactly one claim succeeds; the others
 * answer 410 upload_link_used and their files are removed.
 */
export async function uploadThroughLink(
  deps: Deps,
  token: string,
  file: { bytes: Uint8Array; name: string | null },
): Promise<AssetRecord> {
  const link = await assertLinkUsable(deps, await findLinkByToken(deps, token));
  const image = await checkImageBytes(deps, file.bytes);
  return storeImage(
    deps,
    link.accountId,
    image,
    { fileName: assetFileName(image.ext, file.name), source: "upload" },
    async (asset) => {
      const claimed = await deps.store.db
        .update(uploadLinks)
        .set({ usedAt: asset.createdAt, assetId: asset.id })
        .where(and(eq(uploadLinks.id, link.id), isNull(uploadLinks.usedAt), gt(uploadLinks.expiresAt, asset.createdAt), linkAccountActive()))
        .returning({ id: uploadLinks.id })
        .all();
      if (claimed.length !== 1) {
        // Re-read inside the transaction to name the right reason (used by a concurrent upload, expired or its account
        // disabled meanwhile).
        const now = (await deps.store.db.select().from(uploadLinks).where(eq(uploadLinks.id, link.id)).get()) ?? null;
        await assertLinkUsable(deps, now);
        throw new AppError("upload_link_used", "This upload link was already used; ask for a new one.");
      }
    },
  );
}

/** Deletes links that expired more than the retention window ago, used or not. Returns how many went. */
export async function tidyUploadLinks(deps: Deps): Promise<number> {
  const cutoff = deps.clock.now() - UPLOAD_LINK_RETENTION_MS;
  const removed = await deps.store.write((tx) =>
    tx.delete(uploadLinks).where(lte(uploadLinks.expiresAt, cutoff)).returning({ id: uploadLinks.id }).all(),
  );
  return removed.length;
}
