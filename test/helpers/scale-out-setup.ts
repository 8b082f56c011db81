/**
 * The scale-out test's setup, run as its own process (`bun test/helpers/scale-out-setup.ts <step> …`) with the
 * cluster's DATABASE_URL and INSTANCE_SECRET in its environment, so the test process itself never switches its tables
 * to PostgreSQL (useDialect is process-wide). Prints one JSON line.
 *
 *   account <receiverUrl>                     → { accountId, userId, email, password, keyId, key, connectionId, creationId }
 *   posts <accountId> <connectionId> <creationId> <count> <firstDueAt> <spreadMs> → { targetIds }
 */
import { bootstrap } from "../../src/bootstrap";
import { loadConfig } from "../../src/config";
import { silentLogger } from "../../src/lib/log";
import { createAccount } from "../../src/modules/accounts/service";
import { mintKey } from "../../src/modules/auth/keys-service";
import { addConnection } from "../../src/modules/connections/service";
import { SCOPES } from "../../src/auth/scopes";
import { WEBHOOK_SECRET, makeCreation } from "../publishing-fixtures";
import { insertDuePosts } from "../publishing-load";

const [step, ...args] = process.argv.slice(2);
const deps = await bootstrap(loadConfig(process.env), { log: silentLogger });
try {
  if (step === "account") {
    const receiverUrl = args[0] ?? "";
    const email = `owner-${crypto.randomUUID().slice(0, 8)}@example.test`;
    const password = "correct horse battery";
    const { accountId, userId } = await createAccount(deps, { name: "Cluster", email, password, credits: 100 });
    const key = await mintKey(deps, { accountId, userId, name: "cluster key", groups: SCOPES, expiresDays: 90 });
    const connection = await addConnection(deps, { accountId, platform: "webhook", url: `${receiverUrl}/hook`, secret: WEBHOOK_SECRET });
    if (!connection.readyToPost) throw new Error(`the webhook connection is not ready: ${connection.blockedReason}`);
    const creation = await makeCreation(deps, accountId, { caption: "Posted by a cluster" });
    console.log(JSON.stringify({ accountId, userId, email, password, keyId: key.id, key: key.key, connectionId: connection.accountId, creationId: creation.id }));
  } else if (step === "posts") {
    const [accountId = "", connectionId = "", creationId = "", count = "0", firstDueAt = "0", spreadMs = "0"] = args;
    const targetIds = await insertDuePosts(deps, {
      accountId,
      connectionId,
      creationId,
      count: Number(count),
      firstDueAt: Number(firstDueAt),
      spreadMs: Number(spreadMs),
    });
    console.log(JSON.stringify({ targetIds }));
  } else {
    throw new Error(`unknown step ${step}`);
  }
} finally {
  await deps.store.close();
}
