import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseIPv4, parseIPv6, refusedAddressReason, webhookUrlProblem } from '../../src/domain/webhook-url.js';

const allowed = [
  'http://example.com/hook',
  'https://example.com:8443/a?b=c',
  'http://10.0.0.5:9000/x', // RFC 1918
  'http://172.16.3.4/',
  'http://192.168.1.10/',
  'http://8.8.8.8/',
  'http://[2001:db8::1]/',
  'http://[fd00::1]/', // unique local, the IPv6 private range
  'http://[::ffff:10.0.0.1]/', // mapped private
  'http://localhost.example.com/', // only the localhost name itself and its subdomains are loopback
  'http://mylocalhost/',
  'http://169.253.1.1/',
  'http://126.255.255.255/',
  'http://128.0.0.1/',
];

const refused: Array<[string, RegExp]> = [
  ['ftp://example.com/', /scheme/],
  ['file:///etc/passwd', /scheme/],
  ['javascript:alert(1)', /scheme/],
  ['example.com/hook', /absolute/],
  ['', /absolute/],
  ['http://', /absolute|host/],
  ['http://localhost/', /loopback/],
  ['http://LOCALHOST:8080/', /loopback/],
  ['http://localhost./', /loopback/],
  ['http://api.localhost/', /loopback/],
  ['http://a.b.localhost./', /loopback/],
  ['http://127.0.0.1/', /loopback/],
  ['http://127.0.0.1./', /loopback/],
  ['http://127.1.2.3:9/', /loopback/],
  ['http://127.1/', /loopback/], // shorthand, normalised by the URL parser
  ['http://0x7f.0.0.1/', /loopback/],
  ['http://2130706433/', /loopback/],
  ['http://017700000001/', /loopback/],
  ['http://[::1]/', /loopback/],
  ['http://[0:0:0:0:0:0:0:1]/', /loopback/],
  ['http://[::ffff:127.0.0.1]/', /loopback/],
  ['http://[::ffff:7f00:1]/', /loopback/],
  ['http://[::127.0.0.1]/', /loopback/],
  ['http://[64:ff9b::127.0.0.1]/', /loopback/],
  ['http://169.254.169.254/latest/meta-data', /link-local/],
  ['http://169.254.0.1/', /link-local/],
  ['http://[fe80::1]/', /link-local/],
  ['http://[febf::1]/', /link-local/],
  ['http://[::ffff:169.254.169.254]/', /link-local/],
  ['http://0.0.0.0/', /unspecified/],
  ['http://0/', /unspecified/],
  ['http://[::]/', /unspecified/],
  ['http://224.0.0.1/', /multicast/],
  ['http://255.255.255.255/', /broadcast/],
  ['http://[ff02::1]/', /multicast/],
  ['http://user:pass@example.com/', /credentials/],
  [`http://example.com/${'a'.repeat(2100)}`, /2048/],
];

test('webhook URL rule: allowed targets', () => {
  for (const url of allowed) assert.equal(webhookUrlProblem(url), null, url);
});

test('webhook URL rule: refused targets name the reason', () => {
  for (const [url, reason] of refused) {
    const problem = webhookUrlProblem(url);
    assert.ok(problem, `expected ${url} to be refused`);
    assert.match(problem, reason, url);
  }
});

test('resolved-address check (send time) refuses loopback, link-local, unspecified and non-addresses', () => {
  for (const address of ['127.0.0.1', '127.255.0.9', '::1', '::ffff:127.0.0.1', '169.254.1.1', 'fe80::abcd', '0.0.0.0', '::']) {
    assert.ok(refusedAddressReason(address), address);
  }
  for (const address of ['10.1.2.3', '192.168.0.1', '172.31.255.255', '93.184.216.34', '2001:db8::5', 'fd12::1', '::ffff:192.168.1.1']) {
    assert.equal(refusedAddressReason(address), null, address);
  }
  assert.match(refusedAddressReason('example.com') ?? '', /not an IP address/);
  assert.match(refusedAddressReason('') ?? '', /not an IP address/);
  assert.match(refusedAddressReason('fe80::1%eth0') ?? '', /not an IP address/);
});

test('IP parsers are strict', () => {
  assert.deepEqual(parseIPv4('10.0.0.1'), [10, 0, 0, 1]);
  for (const bad of ['10.0.0', '10.0.0.256', '010.0.0.1', '1.2.3.4.5', 'a.b.c.d', '1..2.3', ' 1.2.3.4']) assert.equal(parseIPv4(bad), null, bad);
  assert.deepEqual(parseIPv6('::1'), [0, 0, 0, 0, 0, 0, 0, 1]);
  assert.deepEqual(parseIPv6('fe80::'), [0xfe80, 0, 0, 0, 0, 0, 0, 0]);
  assert.deepEqual(parseIPv6('::ffff:1.2.3.4'), [0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
  assert.deepEqual(parseIPv6('1:2:3:4:5:6:7:8'), [1, 2, 3, 4, 5, 6, 7, 8]);
  for (const bad of ['1:2:3:4:5:6:7', '1:2:3:4:5:6:7:8:9', '1::2::3', '12345::', ':::', 'g::1', '1.2.3.4::', '::1.2.3', '1:2:3:4:5:6:7::8']) {
    assert.equal(parseIPv6(bad), null, bad);
  }
});
