/**
 * Which addresses the runner may connect to for a URL it was given (feeds, recipient URLs,
 * webhook receivers). By default only public unicast addresses: a caller of the API must not
 * reach the runner's own host, its private network or a cloud metadata service through it.
 * RUNNER_ALLOW_PRIVATE_URLS (parsed here, read in config.ts) is the operator's opt-in.
 */
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Ranges `RUNNER_ALLOW_PRIVATE_URLS=true` opens: a host's own and its private networks. Not
 * link-local (the metadata service lives there).
 */
const PRIVATE_RANGES = new Set(['loopback', 'private', 'carrierGradeNat', 'uniqueLocal']);
/**
 * Never a destination, whatever the opt-in says: 0.0.0.0 and
 * :: reach the runner's own host, the others are not one host.
 */
const NEVER = new Set(['unspecified', 'multicast', 'broadcast']);

type Entry = { kind: 'host'; host: string; port?: number } | { kind: 'range'; range: [Address, number]; port?: number };

export interface UrlPolicy {
	/** `true`: every loopback, private, CGNAT and unique-local address. */
	anyPrivate: boolean;
	entries: Entry[];
}

const DEFAULT_POLICY: UrlPolicy = { anyPrivate: false, entries: [] };

/** An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 address it is. */
function unmapped(address: Address): Address {
	return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
		? (address as ipaddr.IPv6).toIPv4Address()
		: address;
}

function parseEntry(text: string): Entry {
	const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
	let host = text;
	let port: number | undefined;
	if (bracketed) {
		host = bracketed[1];
		port = bracketed[2] === undefined ? undefined : Number(bracketed[2]);
	} else if (/^[^:]+:\d+$/.test(text)) {
		const at = text.lastIndexOf(':');
		host = text.slice(0, at);
		port = Number(text.slice(at + 1));
	}
	if (port !== undefined && !(port >= 1 && port <= 65535)) throw new Error(`"${text}" has a port outside 1-65535`);
	if (host.includes('/')) {
		if (port !== undefined) throw new Error(`"${text}": a CIDR range takes no port`);
		try {
			return { kind: 'range', range: ipaddr.parseCIDR(host) };
		} catch {
			throw new Error(`"${text}" is not a CIDR range like 10.0.0.0/8 or fd00::/8`);
		}
	}
	if (ipaddr.isValid(host)) {
		const address = unmapped(ipaddr.parse(host));
		return { kind: 'range', range: [address, address.kind() === 'ipv4' ? 32 : 128], port };
	}
	if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(host))
		throw new Error(`"${text}" is not a host name, host:port, IP address or CIDR range`);
	return { kind: 'host', host: host.toLowerCase(), port };
}

/**
 * RUNNER_ALLOW_PRIVATE_URLS: empty or `false` (the default) for public addresses only; `true` for
 * every loopback, private, CGNAT and unique-local address; or a comma list of host names,
 * host:port, IP addresses ([::1]:port for IPv6) and CIDR ranges that may be reached besides.
 */
export function parseUrlPolicy(text: string | undefined): UrlPolicy {
	const value = (text ?? '').trim();
	if (value === '' || value.toLowerCase() === 'false') return DEFAULT_POLICY;
	if (value.toLowerCase() === 'true') return { anyPrivate: true, entries: [] };
	const entries = value
		.split(',')
		.map((part) => part.trim())
		.filter((part) => part !== '')
		.map(parseEntry);
	return { anyPrivate: false, entries };
}

/** Whether connecting to `address` (an IP) on `port` for a URL whose host is `hostname` is allowed. */
export function addressAllowed(policy: UrlPolicy, hostname: string, port: number, address: string): boolean {
	if (!ipaddr.isValid(address)) return false;
	const ip = unmapped(ipaddr.parse(address));
	const range = ip.range();
	if (NEVER.has(range)) return false;
	if (range === 'unicast') return true;
	if (policy.anyPrivate && PRIVATE_RANGES.has(range)) return true;
	const host = hostname.toLowerCase();
	return policy.entries.some((entry) => {
		if (entry.port !== undefined && entry.port !== port) return false;
		if (entry.kind === 'host') return entry.host === host;
		return ip.kind() === entry.range[0].kind() && ip.match(entry.range);
	});
}
