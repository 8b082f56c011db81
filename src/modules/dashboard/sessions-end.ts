/** Ends a person's other dashboard sessions (after they change their password), keeping the one in use. */
import { and, eq, ne } from "drizzle-orm";
import type { Deps } from "../../deps";
import { sessions } from "../../db/schema/sessions";

export function endOtherSessions(deps: Pick<Deps, "db">, userId: string, keepSessionId: string): number {
  return deps.db
    .delete(sessions)
    .where(and(eq(sessions.userId, userId), ne(sessions.id, keepSessionId)))
    .returning({ id: sessions.id })
    .all().length;
}
