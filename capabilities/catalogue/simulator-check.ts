import type { Catalogue } from '../../domain/catalogue';
import { DEFAULT_SIMULATOR_URL, type Config } from '../../platform/config';
import type { Logger } from '../../platform/logger';

/**
 * The enabled channels whose base URL is on the simulator's default origin (http://127.0.0.1:8090): the image's
 * data/catalogue.json, seeded by the chart unless `catalogue.existingConfigMap` names another, points every channel
 * at `${SIMULATOR_URL}`, which in a pod is a loopback where nothing listens. Each model's every ladder is read.
 */
export function simulatorChannels(catalogue: Catalogue, simulatorUrl = DEFAULT_SIMULATOR_URL): string[] {
  const origin = new URL(simulatorUrl).origin;
  const ids = new Set<string>();
  for (const m of catalogue.models) {
    for (const ladder of Object.values(m.channels ?? {})) {
      for (const c of ladder) {
        try {
          if (new URL(c.base_url).origin === origin) ids.add(c.id);
        } catch {
          // not a URL: the catalogue leaves such a channel out already
        }
      }
    }
  }
  return [...ids].sort();
}

/**
 * In production, an error line at start naming the channels that call the simulator's default address (and what
 * to do): calls on them fail with a connection error. The process starts anyway, so the admin API can fix them.
 * Returns the channel ids (empty outside production).
 */
export function warnSimulatorChannels(config: Pick<Config, 'DEPLOYMENT_MODE'>, catalogue: Catalogue, log: Pick<Logger, 'error'>): string[] {
  if (config.DEPLOYMENT_MODE !== 'production') return [];
  const ids = simulatorChannels(catalogue);
  if (ids.length > 0) {
    log.error(
      `PRODUCTION CHANNELS CALL THE SIMULATOR: ${ids.length} enabled channel(s) have the base URL ${DEFAULT_SIMULATOR_URL} (the dev simulator's default), ` +
        'where no upstream listens: every call on them fails. Seed a real catalogue (CATALOGUE_FILE=deploy/production/catalogue.json; the chart: ' +
        'catalogue.existingConfigMap; docs/operations.md) or change them through the admin API',
      { channels: ids.slice(0, 20), count: ids.length },
    );
  }
  return ids;
}
