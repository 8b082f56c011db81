/** Ends a person's other dashboard sessions (after they change their password), keeping the one in use. */
import { and, eq, ne } from "drizzle-orm";
import type { Deps } from "../../deps";
import { sessions } from "../../db/tables";

export async function endOtherSessions(deps: Pick<Deps, "store">, userId: string, keepSessionId: string): Promise<number> {
  const ended = await deps.store.write((tx) =>
    tx
      .delete(sessions)
      .where(and(eq(sessions.userId, userId), ne(sessions.id, keepSessionId)))
      .returning({ id: sessions.id })
      .all(),
  );
  return ended.length;
}
