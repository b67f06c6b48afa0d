import { createHash } from 'node:crypto';
import type { Channel } from '../../domain/catalogue';

/**
 * Channel order for one request. The channels that share the best priority
 * form the first tier; the rest keep their ladder order behind it. Within the
 * first tier, the order is a weighted rendezvous ranking: with an affinity
 * key (a conversation's `session_id`) the ranking is a hash of key and
 * channel, so every turn of the conversation lands on the same channel (its
 * prefix cache hits) and only moves when that channel fails or leaves the
 * catalogue; without a key it is random, so turns spread by weight.
 */
export function orderByAffinity(channels: Channel[], affinityKey: string | null, random: () => number = Math.random): Channel[] {
  if (channels.length < 2) return channels;
  const best = Math.min(...channels.map((c) => c.priority));
  const tier = channels.filter((c) => c.priority === best);
  if (tier.length < 2) return channels;
  const rest = channels.filter((c) => c.priority !== best);
  const ranked = tier
    .map((c) => ({ c, score: rendezvousScore(c.weight, affinityKey === null ? random() : unitHash(`${affinityKey}\u0000${c.id}`)) }))
    .sort((a, b) => b.score - a.score)
    .map((x) => x.c);
  return [...ranked, ...rest];
}

/** Weighted rendezvous: -w / ln(u) for u uniform in (0, 1) picks each channel with probability w / sum(w). */
function rendezvousScore(weight: number, u: number): number {
  const x = Math.min(Math.max(u, Number.EPSILON), 1 - Number.EPSILON);
  return -weight / Math.log(x);
}

/** A stable uniform number in (0, 1) from a string. */
function unitHash(s: string): number {
  const h = createHash('sha256').update(s).digest();
  return (h.readUIntBE(0, 6) + 0.5) / 2 ** 48;
}
