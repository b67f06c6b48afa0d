import type { UsageRecorder } from './usage';

/** The call records: what the usage capability adds to the process's services. */
export interface UsageDeps {
  usage: UsageRecorder;
}
