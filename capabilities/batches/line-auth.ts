import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A batch line is sent to the gateway as a live call with the key's own credentials, plus a header
 * signed with a secret derived from KEY_ENCRYPTION_KEY that names the line. It makes the call's
 * request id (so its usage row and its ledger op id) the line's, the same however often a worker
 * sends it, and prices it with the batch multiplier. Without a valid signature the header is ignored.
 */
export const BATCH_LINE_HEADER = 'x-gateway-batch-line';

const secretOf = (keyEncryptionKey: string) => createHmac('sha256', Buffer.from(keyEncryptionKey, 'hex')).update('batch-line').digest();

/** The request id of a batch line: stable across retries, ASCII, header-safe. */
export const lineRequestId = (batchId: string, index: number) => `${batchId}_l${index}`;

export function signLine(keyEncryptionKey: string, batchId: string, index: number, keyId: string): string {
  const claim = `${batchId}.${index}.${keyId}`;
  const mac = createHmac('sha256', secretOf(keyEncryptionKey)).update(claim).digest('base64url');
  return `${claim}.${mac}`;
}

export function verify(keyEncryptionKey: string, header: string): { batchId: string; index: number; keyId: string } | null {
  const parts = header.split('.');
  if (parts.length !== 4) return null;
  const [batchId, index, keyId, mac] = parts;
  const want = createHmac('sha256', secretOf(keyEncryptionKey)).update(`${batchId}.${index}.${keyId}`).digest();
  const got = Buffer.from(mac, 'base64url');
  if (got.length !== want.length || !timingSafeEqual(got, want) || !/^\d+$/.test(index)) return null;
  return { batchId, index: Number(index), keyId };
}

