import { describe, expect, it } from 'vitest';
import { blockedAddressReason } from './blocked-addresses.js';

describe('blockedAddressReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['169.254.0.1', 'link-local (cloud metadata)'],
    ['100.64.0.1', 'shared address space (CGNAT)'],
    ['100.127.255.255', 'shared address space (CGNAT)'],
    ['0.0.0.0', 'this-network'],
    ['0.1.2.3', 'this-network'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'benchmarking'],
    ['::1', 'unspecified, loopback or IPv4-compatible'],
    ['::', 'unspecified, loopback or IPv4-compatible'],
    ['::127.0.0.1', 'unspecified, loopback or IPv4-compatible'],
    ['fc00::1', 'unique local (private)'],
    ['fd12:3456::1', 'unique local (private)'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['ff02::1', 'multicast'],
    // IPv4-mapped IPv6, dotted and hex: checked as the IPv4 address they carry.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link-local (cloud metadata)'],
    ['::ffff:a9fe:a9fe', 'link-local (cloud metadata)'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:c0a8:101', 'private'],
    ['0:0:0:0:0:ffff:7f00:1', 'loopback'],
    // NAT64 reaches the IPv4 address it embeds.
    ['64:ff9b::7f00:1', 'NAT64 to loopback'],
    ['64:ff9b::169.254.169.254', 'NAT64 to link-local (cloud metadata)'],
    ['64:ff9b::10.0.0.1', 'NAT64 to private'],
    ['64:ff9b::a00:1', 'NAT64 to private'],
    // IPv6 forms that carry or reach an IPv4 address: refused whatever they embed (issue 28).
    ['::ffff:8.8.8.8', 'IPv4-mapped'],
    ['::ffff:808:808', 'IPv4-mapped'],
    ['::ffff:0:a00:1', 'IPv4-translated'],
    ['::ffff:0:808:808', 'IPv4-translated'],
    ['2002:a00:1::1', '6to4'],
    ['2002:808:808::1', '6to4'],
    ['64:ff9b:1::a00:1', 'local-use NAT64'],
    ['64:ff9b:1:ffff::1', 'local-use NAT64'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001:db8::1', 'documentation'],
    ['not-an-ip', 'not an IP address'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.255.255',
    '192.169.0.1',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '64:ff9b::808:808',
    '2003::1',
    '64:ff9b:2::1',
    'fbff::1',
    'fe7f::1',
  ])('lets %s through', (address) => {
    expect(blockedAddressReason(address)).toBeUndefined();
  });
});
