/**
 * A small typed client for Pinterest's API v5 (https://developers.pinterest.com/docs/api/v5/; the official
 * description is test/peers/platform-specs/pinterest-v5.openapi.json). Pinterest's official SDK is for Python only,
 * and no well-kept JavaScript client takes a base-URL override: this client is the few calls Seedcast makes, typed
 * from the description (types.ts).
 */
import type { Deps } from "../../../deps";
import { DeliveryError } from "../../connector";
import { failureKindOf, providerFetch } from "../../outbound";
import type { Account, Board, Page, Pin, PinCreate } from "./types";

/** Pinterest's API (the description's server). */
export const PINTEREST_API = "https://api.pinterest.com/v5";
/** Pins looked at when searching a board for a pin whose answer was lost. */
const LOOKUP_PAGE = 50;

/** Pinterest's words from an error answer (`{code, message}`), else the status. */
async function words(res: Response): Promise<string> {
  const body = (await res.json().catch(() => null)) as { code?: unknown; message?: unknown } | null;
  if (typeof body?.message === "string" && body.message !== "") return typeof body.code === "number" ? `${body.message} (code ${body.code})` : body.message;
  return `HTTP ${res.status}`;
}

async function refusal(res: Response, what: string): Promise<DeliveryError> {
  return new DeliveryError(failureKindOf(res.status), `Pinterest refused ${what}: ${await words(res)}`);
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

/** The signed-in account. */
export async function userAccount(deps: Pick<Deps, "config">, token: string): Promise<{ ok: true; account: Account } | { ok: false; status: number; words: string }> {
  const res = await providerFetch(deps, `${PINTEREST_API}/user_account`, { headers: auth(token) });
  if (!res.ok) return { ok: false, status: res.status, words: await words(res) };
  return { ok: true, account: (await res.json()) as Account };
}

/** Every board of the account (following `bookmark`, at most 10 pages of 100). */
export async function listBoards(deps: Pick<Deps, "config">, token: string): Promise<Board[]> {
  const boards: Board[] = [];
  let bookmark: string | null | undefined = null;
  for (let page = 0; page < 10; page++) {
    const query = new URLSearchParams({ page_size: "100" });
    if (bookmark) query.set("bookmark", bookmark);
    const res = await providerFetch(deps, `${PINTEREST_API}/boards?${query}`, { headers: auth(token) });
    if (!res.ok) throw await refusal(res, "the list of boards");
    const body = (await res.json()) as Page<Board>;
    boards.push(...body.items);
    bookmark = body.bookmark;
    if (!bookmark) break;
  }
  return boards;
}

/** One board, or null when it is gone (404). */
export async function getBoard(deps: Pick<Deps, "config">, token: string, boardId: string): Promise<{ ok: true; board: Board | null } | { ok: false; status: number; words: string }> {
  const res = await providerFetch(deps, `${PINTEREST_API}/boards/${encodeURIComponent(boardId)}`, { headers: auth(token) });
  if (res.status === 404) {
    await res.body?.cancel();
    return { ok: true, board: null };
  }
  if (!res.ok) return { ok: false, status: res.status, words: await words(res) };
  return { ok: true, board: (await res.json()) as Board };
}

/** Creates a pin (`POST /v5/pins`); answers it. */
export async function createPin(deps: Pick<Deps, "config">, token: string, pin: PinCreate): Promise<Pin> {
  const res = await providerFetch(deps, `${PINTEREST_API}/pins`, {
    method: "POST",
    headers: { ...auth(token), "content-type": "application/json" },
    body: JSON.stringify(pin),
    timeoutMs: 60_000,
  });
  if (!res.ok) throw await refusal(res, "the pin");
  const body = (await res.json().catch(() => null)) as Pin | null;
  if (typeof body?.id !== "string") throw new DeliveryError("unknown", "Pinterest took the pin without saying its id.");
  return body;
}

/** The board's most recent pins (`GET /v5/boards/{board_id}/pins`). */
export async function boardPins(deps: Pick<Deps, "config">, token: string, boardId: string): Promise<Pin[]> {
  const res = await providerFetch(deps, `${PINTEREST_API}/boards/${encodeURIComponent(boardId)}/pins?page_size=${LOOKUP_PAGE}`, { headers: auth(token) });
  if (!res.ok) throw await refusal(res, "the look-up of the board's pins");
  return ((await res.json()) as Page<Pin>).items;
}
