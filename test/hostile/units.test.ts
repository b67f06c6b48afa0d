import test from 'ava';
import { parseInstant } from '../../domain/instant';
import { addressRange, checkPublicHttpUrl } from '../../domain/url-policy';
import { nestingExceeds, MAX_JSON_DEPTH } from '../../gateway/middleware/body';
import { nestedText } from './kit';

// Unit tests of the pure rules behind the hostile-input classes.

const BAD_DATES = ['99999999999999', '999999999999999999999', '1e20', '-1', '10000-01-01', '+275760-09-13', '2026-02-30', '2026-13-01', '2026-10-16T25:00:00Z', '2026-10-16T10:00:00', 'yesterday', 'NaN', '0x10'];

test('the parser: forms, calendar days, range', (t) => {
  t.is(parseInstant('0')?.toISOString(), '1970-01-01T00:00:00.000Z');
  t.is(parseInstant('1760572800')?.toISOString(), '2025-10-16T00:00:00.000Z');
  t.is(parseInstant('2026-10-16')?.toISOString(), '2026-10-16T00:00:00.000Z');
  t.is(parseInstant('2026-10-16T02:00:00+02:00')?.toISOString(), '2026-10-16T00:00:00.000Z');
  t.is(parseInstant('2026-10-16 02:00:00 02:00')?.toISOString(), '2026-10-16T00:00:00.000Z');
  t.is(parseInstant('9999-12-31T23:59:59Z')?.toISOString(), '9999-12-31T23:59:59.000Z');
  t.is(parseInstant('253402300799')?.toISOString(), '9999-12-31T23:59:59.000Z');
  for (const bad of [...BAD_DATES, '253402300800', '', ' ', '2026-1-1', '2024-02-30', '2023-02-29', '2026-10-16T10:00Z']) t.is(parseInstant(bad), null, bad);
  t.is(parseInstant('2024-02-29')?.toISOString(), '2024-02-29T00:00:00.000Z');
});

test('the depth check counts brackets outside strings only', (t) => {
  t.false(nestingExceeds(Buffer.from(nestedText(MAX_JSON_DEPTH)), MAX_JSON_DEPTH));
  t.true(nestingExceeds(Buffer.from(nestedText(MAX_JSON_DEPTH + 1)), MAX_JSON_DEPTH));
  t.false(nestingExceeds(Buffer.from(JSON.stringify({ s: '['.repeat(10_000) })), MAX_JSON_DEPTH));
  t.false(nestingExceeds(Buffer.from(JSON.stringify({ s: '\\"[[[' + '['.repeat(500) })), MAX_JSON_DEPTH));
  t.true(nestingExceeds(Buffer.from(`{"a\\\\":${nestedText(200)}}`), MAX_JSON_DEPTH));
});

/** Hosts that reach the vendor's own machine or network, in the forms attackers use. */
const PRIVATE = [
  'http://127.0.0.1/a.png', 'http://127.1/a.png', 'http://2130706433/a.png', 'http://0x7f000001/a.png', 'http://0x7f.1/a.png',
  'http://017700000001/a.png', 'http://0177.0.0.1/a.png', 'http://[::1]/a.png', 'http://[::]/a.png', 'http://0.0.0.0/a.png', 'http://0/a.png',
  'http://[::ffff:127.0.0.1]/a.png', 'http://[::ffff:7f00:1]/a.png', 'http://[0:0:0:0:0:ffff:7f00:1]/a.png', 'http://[::ffff:10.0.0.1]/a.png',
  'http://localhost/a.png', 'http://localhost./a.png', 'http://LOCALHOST../a.png', 'http://a.localhost/a.png', 'http://printer.local/a.png',
  'http://metadata.google.internal/a.png', 'http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/a.png', 'http://[fd00::1]/a.png',
  'http://[fc00::1]/a.png', 'http://10.1.2.3/a.png', 'http://172.16.0.1/a.png', 'http://172.31.255.255/a.png', 'http://192.168.1.1/a.png',
  'http://100.64.0.1/a.png', 'http://100.127.255.254/a.png', 'http://224.0.0.1/a.png', 'http://255.255.255.255/a.png', 'http://[2002:7f00:1::]/a.png',
  'http://[64:ff9b::7f00:1]/a.png', 'http://[2001::1]/a.png', 'http://10.0.0.1./a.png', 'http://intranet/a.png',
  'http://user:pass@cdn.example.com/a.png', 'ftp://cdn.example.com/a.png', 'file:///etc/passwd', 'gopher://cdn.example.com/', 'not a url',
];
const PUBLIC = ['https://cdn.example.com/a.png', 'http://93.184.216.34/a.png', 'https://[2606:2800:220:1:248:1893:25c8:1946]/a.png', 'https://cdn.example.com./a.png', 'https://8.8.8.8:8443/x'];

test('the policy: private, loopback, link-local, ULA, CGNAT, unspecified and mapped forms refused; public kept', (t) => {
  for (const u of PRIVATE) t.false(checkPublicHttpUrl(u).ok, u);
  for (const u of PUBLIC) t.true(checkPublicHttpUrl(u).ok, u);
});


test('IPv4-compatible IPv6 (::/96) is read as the IPv4 address it carries, like IPv4-mapped (security audit)', (t) => {
  for (const u of ['https://[::127.0.0.1]/', 'https://[::7f00:1]/a.png', 'http://[0:0:0:0:0:0:a00:1]/a.png', 'http://[::169.254.169.254]/latest/meta-data/', 'http://[::192.168.1.1]/', 'http://[::100.64.0.1]/']) {
    t.false(checkPublicHttpUrl(u).ok, u);
  }
  t.is(addressRange('::7f00:1'), 'loopback');
  t.is(addressRange('::a00:1'), 'private');
  t.is(addressRange('::a9fe:a9fe'), 'linkLocal');
  t.is(addressRange('::1'), 'loopback');
  t.is(addressRange('::'), 'unspecified');
  t.is(addressRange('::808:808'), 'unicast');
  t.true(checkPublicHttpUrl('https://[::8.8.8.8]/x').ok);
});
