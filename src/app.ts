/**
 * createApp(deps): the root Elysia app. Every module is mounted here, in one visible place, behind the pipeline.
 */
import { Elysia } from "elysia";
import type { Deps } from "./deps";
import { envelope } from "./http/envelope";
import { type PipelinedApp, withPipeline } from "./http/pipeline";
import type { RequestObserver } from "./metrics/registry";
import { accountSettingsModule } from "./modules/accounts";
import { assetsModule } from "./modules/assets";
import { mediaModule } from "./modules/media";
import { uploadsModule } from "./modules/uploads";
import { docsModule } from "./modules/docs";
import { creationsModule } from "./modules/creations";
import { creditsModule } from "./modules/credits";
import { healthModule } from "./modules/health";
import { mcpModule } from "./modules/mcp";
import { metricsModule } from "./modules/metrics";
import { scheduleModule } from "./modules/schedule";
import { queueModule } from "./modules/schedule/queue-routes";
import { bulkModule } from "./modules/schedule/bulk-routes";
import { approvalModule } from "./modules/schedule/approval-routes";
import { seedsModule } from "./modules/seeds";
import { voiceModule } from "./modules/voice";
import { webhooksModule } from "./modules/webhooks";
import { dashboardModule } from "./modules/dashboard";
import { feedsModule } from "./modules/feeds";
import { oauthModule } from "./modules/oauth";

export interface AppOptions {
  /** False while draining for shutdown (readyz answers 503). */
  isReady?: () => boolean;
  observers?: RequestObserver[];
}

/** Assembles the whole HTTP surface: the modules in one Elysia app, inside the request pipeline. */
export function createApp(deps: Deps, options: AppOptions = {}): PipelinedApp {
  const isReady = options.isReady ?? (() => true);
  const app: Elysia = new Elysia();
  app
    .use(envelope(deps))
    .use(docsModule(deps, () => app.routes))
    .use(healthModule(deps, isReady))
    .use(metricsModule(deps))
    // The image library: asset routes, upload links and their page, and /media.
    .use(assetsModule(deps))
    .use(uploadsModule(deps))
    .use(mediaModule(deps))
    .use(creditsModule(deps))
    .use(seedsModule(deps))
    .use(voiceModule(deps))
    .use(creationsModule(deps))
    .use(scheduleModule(deps))
    .use(feedsModule(deps))
    .use(approvalModule(deps))
    .use(queueModule(deps))
    .use(bulkModule(deps))
    .use(accountSettingsModule(deps))
    .use(oauthModule(deps))
    .use(webhooksModule(deps))
    .use(mcpModule(deps))
    .use(dashboardModule(deps));
  return withPipeline(deps, app, [deps.metrics.observeRequest, ...(options.observers ?? [])]);
}

export type App = PipelinedApp;
