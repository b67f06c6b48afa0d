import test from 'ava';
import { formatCredits, lineCost, parseCredits, ratio, mulRatio, creditsNumber, CreditsInput } from '../../domain/money';

test('parse and format are exact inverses for up to 9 decimals', (t) => {
  t.is(parseCredits('40.44'), 40_440_000_000);
  t.is(parseCredits(134.8), 134_800_000_000);
  t.is(parseCredits('0.674'), 674_000_000);
  t.is(formatCredits(40_440_000_000), '40.44');
  t.is(formatCredits(1), '0.000000001');
  t.is(formatCredits(-674_000_000), '-0.674');
  t.throws(() => parseCredits('1.0000000001'));
  t.throws(() => parseCredits('abc'));
  // property: random amounts round-trip
  for (let i = 0; i < 2000; i++) {
    const nano = Math.floor(Math.random() * 1e15) * (Math.random() < 0.5 ? -1 : 1);
    t.is(parseCredits(formatCredits(nano)), nano);
  }
});

test('lineCost rounds half up once per line, exactly', (t) => {
  // 1000 tokens at 3 credits per 1M = 0.003 credits
  t.is(lineCost(1000, parseCredits('3'), 1_000_000), 3_000_000);
  // 1 token at 0.028 per 1M x 0.6 = 0.0000000168 credits = 16.8 nano -> 17
  t.is(lineCost(1, parseCredits('0.028'), 1_000_000, ratio('0.6')), 17);
  // 0.0001 per 1M = 0.1 nano per token; x 0.3 = 0.03 nano per token
  t.is(lineCost(5, parseCredits('0.0001'), 1_000_000, ratio('0.3')), 0); // 0.15 nano -> 0
  t.is(lineCost(17, parseCredits('0.0001'), 1_000_000, ratio('0.3')), 1); // 0.51 -> 1
  t.is(lineCost(100, parseCredits('3'), 1_000_000, mulRatio(ratio('1.25'), ratio('2'))), 750_000);
  // property: equals exact rational rounding computed independently with BigInt
  for (let i = 0; i < 2000; i++) {
    const units = Math.floor(Math.random() * 3_000_000);
    const price = Math.floor(Math.random() * 100e9);
    const m = ratio(['0.1', '0.3', '0.6', '1.25', '2', '1'][i % 6]);
    const exactTimes2 = (BigInt(units) * BigInt(price) * m.num * 2n) / (1_000_000n * m.den);
    t.is(lineCost(units, price, 1_000_000, m), Number((exactTimes2 + 1n) / 2n));
  }
});

test('billing numbers are JSON numbers of the same value', (t) => {
  t.is(creditsNumber(40_440_000_000), 40.44);
});

test('an amount input past the safe range is called too large, not malformed', (t) => {
  const issue = (v: unknown) => {
    const r = CreditsInput.safeParse(v);
    return r.success ? null : r.error.issues[0].message;
  };
  t.is(issue('99999999999'), 'must be at most 9007199.254740991');
  t.is(issue(1e12), 'must be at most 9007199.254740991');
  t.is(issue('9007199.254740991'), null);
  t.is(issue('1.0000000001'), 'must be a non-negative amount with at most 9 decimals');
  t.is(issue('-99999999999'), 'must be a non-negative amount with at most 9 decimals');
  t.is(issue('abc'), 'must be a non-negative amount with at most 9 decimals');
});
