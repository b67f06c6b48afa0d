import type { Logger } from './logger';

/**
 * A promise nobody awaited that rejects (a background write during a store
 * outage, say) would, by Node's default, end the process and every stream it
 * serves. Money does not depend on it (charges are written ahead), so the
 * rejection is logged with its stack and the process goes on. An uncaught
 * exception still ends the process: its state is unknown.
 */
export function guardProcess(log: Logger): void {
  process.on('unhandledRejection', (reason) => {
    log.error('unhandled rejection (a background promise failed); serving on', { err: reason });
  });
  process.on('uncaughtException', (err) => {
    log.error('uncaught exception; exiting', { err });
    process.exitCode = 1;
    setTimeout(() => process.exit(1), 100).unref();
  });
}
