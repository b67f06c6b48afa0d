import type { Catalogue } from '../../domain/catalogue';
import type { ChannelService } from './channels';
import type { ChannelHealth } from './channel-health';
import type { ChannelTester } from './channel-test';

/** The model and channel registry and the channels' health. */
export interface CatalogueDeps {
  /** The current registry; replaced in place when it is reloaded (every process, on every channel change). */
  catalogue: () => Catalogue;
  /** Channels as managed objects (`/admin/v1/channels`). */
  channels: ChannelService;
  /** This process's circuit breaker per channel; the chat and media ladders consult it. */
  channelHealth: ChannelHealth;
  /** "Test this channel": one small real request. */
  channelTester: ChannelTester;
}
