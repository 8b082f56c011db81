/** The optional scheduled backup (BACKUP_CRON), with retention (BACKUP_KEEP archives in BACKUP_DIR). */
import { mkdirSync } from "node:fs";
import type { Config } from "../../config";
import type { JobDefinition } from "../../jobs/registry";
import { rotateBackups } from "./service";

export const BACKUP_JOB_ID = "__backup__";

/** The backup job when BACKUP_CRON is set, else none. */
export function backupJobs(config: Readonly<Config>): JobDefinition[] {
  const { cron, dir, keep } = config.backup;
  if (!cron) return [];
  return [
    {
      id: BACKUP_JOB_ID,
      schedule: cron,
      run: async (deps) => {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const file = await rotateBackups(deps, dir, keep);
        deps.log.info("backup written", { file });
      },
    },
  ];
}
