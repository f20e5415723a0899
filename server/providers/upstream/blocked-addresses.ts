/**
 * Which IP addresses a URL handed to us by an upstream may never make us connect to: everything that is not
 * the public internet (loopback, private, link-local with the cloud metadata address, CGNAT, multicast,
 * reserved). node:net's `BlockList` holds the ranges; it already matches IPv4-mapped IPv6 forms
 * (`::ffff:127.0.0.1`, `::ffff:7f00:1`) against the IPv4 rules. The well-known NAT64 prefix (`64:ff9b::/96`) is
 * checked by the IPv4 address it embeds; every other IPv6 form that carries or reaches an IPv4 address (mapped,
 * translated, 6to4, Teredo, local-use NAT64) is refused outright: a public host has a plain address to give.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** Each range with the reason a refusal names. */
const BLOCKED_RANGES: ReadonlyArray<
  readonly [network: string, prefix: number, family: 'ipv4' | 'ipv6', reason: string]
> = [
  ['0.0.0.0', 8, 'ipv4', 'this-network'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'shared address space (CGNAT)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol assignments'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  // `::` and `::1` and the deprecated IPv4-compatible form `::a.b.c.d`.
  ['::', 96, 'ipv6', 'unspecified, loopback or IPv4-compatible'],
  ['100::', 64, 'ipv6', 'discard-only'],
  ['fc00::', 7, 'ipv6', 'unique local (private)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

/**
 * Checked for IPv6 addresses only: BlockList also matches an IPv4 address against an IPv6 rule through its mapped
 * form, so `::ffff:0:0/96` among the rules above would refuse every IPv4 address.
 */
const IPV6_ONLY_RANGES: ReadonlyArray<readonly [network: string, prefix: number, reason: string]> = [
  ['::ffff:0:0', 96, 'IPv4-mapped'],
  ['::ffff:0:0:0', 96, 'IPv4-translated'],
  ['64:ff9b:1::', 48, 'local-use NAT64'],
  ['2001::', 32, 'Teredo'],
  ['2001:db8::', 32, 'documentation'],
  ['2002::', 16, '6to4'],
];

const IPV6_ONLY_RULES = IPV6_ONLY_RANGES.map(([network, prefix, reason]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, 'ipv6');
  return { list, reason };
});

const RULES = BLOCKED_RANGES.map(([network, prefix, family, reason]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, reason };
});

/** NAT64's well-known prefix: the last 32 bits are an IPv4 address, reachable through a NAT64 gateway. */
const NAT64 = (() => {
  const list = new BlockList();
  list.addSubnet('64:ff9b::', 96, 'ipv6');
  return list;
})();

/** The last 32 bits of an IPv6 address as dotted IPv4 (the address is valid IPv6). */
function embeddedIPv4(address: string): string {
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) {
    return dotted[1]!;
  }
  const groups = address.split(':');
  const low = Number.parseInt(groups.at(-1) || '0', 16);
  const high = groups.length >= 2 ? Number.parseInt(groups.at(-2) || '0', 16) : 0;
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * Why `address` (an IP literal, IPv6 without brackets, no zone) must not be connected to, or `undefined` when it
 * is a public address. Anything that is not an IP address at all is refused too.
 */
export function blockedAddressReason(input: string): string | undefined {
  // A zone (`fe80::1%eth0`) names an interface, not a different address.
  const address = input.replace(/%.*$/, '');
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
  if (!family) {
    return 'not an IP address';
  }
  if (family === 'ipv6' && NAT64.check(address, 'ipv6')) {
    const reason = blockedAddressReason(embeddedIPv4(address));
    return reason && `NAT64 to ${reason}`;
  }
  const reason = RULES.find((rule) => rule.list.check(address, family))?.reason;
  if (reason || family === 'ipv4') {
    return reason;
  }
  return IPV6_ONLY_RULES.find((rule) => rule.list.check(address, 'ipv6'))?.reason;
}
