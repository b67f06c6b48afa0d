import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';

/**
 * A real DNS server on loopback UDP (RFC 1035 wire format, A records only):
 * names in `records` answer with their IPv4 address, any other question
 * (AAAA included) answers with no records. The delivery's resolver is
 * pointed at it with WEBHOOK_DNS_SERVERS, as an operator would point it at
 * their own resolver.
 */
export async function startDns(records: Record<string, string>): Promise<{ server: string; close(): Promise<void> }> {
  const sock: Socket = createSocket('udp4');
  sock.on('message', (q, peer) => {
    let off = 12;
    const labels: string[] = [];
    while (q[off] !== 0) {
      labels.push(q.subarray(off + 1, off + 1 + q[off]).toString('ascii'));
      off += q[off] + 1;
    }
    const qEnd = off + 5; // zero byte, qtype (2), qclass (2)
    const qtype = q.readUInt16BE(off + 1);
    const name = labels.join('.').toLowerCase();
    const address = qtype === 1 ? records[name] : undefined;
    const header = Buffer.alloc(12);
    q.copy(header, 0, 0, 2); // id
    header.writeUInt16BE(0x8180, 2); // response, recursion desired + available, NOERROR
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(address ? 1 : 0, 6);
    const question = q.subarray(12, qEnd);
    const answer = address
      ? Buffer.concat([Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4]), Buffer.from(address.split('.').map(Number))])
      : Buffer.alloc(0);
    sock.send(Buffer.concat([header, question, answer]), peer.port, peer.address);
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  return {
    server: `127.0.0.1:${(sock.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => sock.close(() => r())),
  };
}
