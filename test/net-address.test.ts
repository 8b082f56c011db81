/**
 * The public-address classifier: a table of hostile host forms, real public addresses, and properties
 * saying that no notation changes the verdict.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { classifyAddress, isPublicUnicast, parseHostLiteral } from "../src/lib/net-address.ts";

/** What a URL host is judged as: its literal address if it is one; names are for the resolver. */
function hostVerdict(host: string): "public" | "refused" | "name" | "invalid" {
  const literal = parseHostLiteral(host);
  if (literal.kind === "name" || literal.kind === "invalid") return literal.kind;
  return isPublicUnicast(literal.address) ? "public" : "refused";
}

const REFUSED_HOSTS: [string, string][] = [
  // IPv4 loopback in every notation WHATWG accepts
  ["127.0.0.1", "loopback"],
  ["2130706433", "decimal loopback"],
  ["0177.0.0.1", "octal loopback"],
  ["0x7f.0.0.1", "hex first octet"],
  ["0x7f000001", "hex 32-bit"],
  ["0x7f.1", "hex short"],
  ["127.1", "short form"],
  ["127.0.1", "three-part"],
  ["017700000001", "octal 32-bit"],
  ["127.0.0.1.", "trailing dot"],
  ["%31%32%37.0.0.1", "percent-encoded"],
  ["１２７.０.０.１", "full-width digits"],
  ["127.255.255.254", "top of 127/8"],
  // the rest of the special IPv4 space
  ["0.0.0.0", "unspecified"],
  ["0", "unspecified, decimal"],
  ["0.1.2.3", "this network"],
  ["10.0.0.1", "private 10/8"],
  ["012.0.0.1", "private, octal"],
  ["167772161", "private, decimal"],
  ["172.16.0.1", "private 172.16/12"],
  ["172.31.255.255", "top of 172.16/12"],
  ["192.168.1.1", "private 192.168/16"],
  ["0xc0a80101", "private, hex"],
  ["169.254.169.254", "link-local metadata"],
  ["0xa9fea9fe", "metadata, hex"],
  ["2852039166", "metadata, decimal"],
  ["100.64.0.1", "CGNAT"],
  ["100.127.255.254", "top of CGNAT"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast SSDP"],
  ["240.0.0.1", "reserved 240/4"],
  ["255.255.255.255", "broadcast"],
  ["192.0.0.8", "IETF protocol assignments"],
  ["192.0.2.1", "TEST-NET-1"],
  ["198.51.100.7", "TEST-NET-2"],
  ["203.0.113.9", "TEST-NET-3"],
  ["198.18.0.1", "benchmarking"],
  ["198.19.255.255", "benchmarking top"],
  ["192.88.99.1", "6to4 relay anycast"],
  // IPv6
  ["[::1]", "IPv6 loopback"],
  ["[0:0:0:0:0:0:0:1]", "IPv6 loopback, long"],
  ["[::]", "IPv6 unspecified"],
  ["[::ffff:127.0.0.1]", "IPv4-mapped loopback"],
  ["[::ffff:7f00:1]", "IPv4-mapped loopback, hex"],
  ["[::ffff:169.254.169.254]", "IPv4-mapped metadata"],
  ["[::ffff:10.0.0.1]", "IPv4-mapped private"],
  ["[0:0:0:0:0:ffff:c0a8:0101]", "IPv4-mapped private, long"],
  ["[::127.0.0.1]", "IPv4-compatible loopback"],
  ["[::8.8.8.8]", "IPv4-compatible (deprecated, refused even when public)"],
  ["[::ffff:0:127.0.0.1]", "IPv4-translated loopback"],
  ["[64:ff9b::127.0.0.1]", "NAT64 loopback"],
  ["[64:ff9b::a9fe:a9fe]", "NAT64 metadata"],
  ["[64:ff9b::10.1.1.1]", "NAT64 private"],
  ["[64:ff9b:1::8.8.8.8]", "local-use NAT64 (refused whatever it carries)"],
  ["[2002:7f00:1::]", "6to4 of loopback"],
  ["[2002:a9fe:a9fe::1]", "6to4 of metadata"],
  ["[2001:0:4136:e378:8000:63bf:80ff:fffe]", "Teredo with loopback client"],
  ["[fe80::1]", "link-local"],
  ["[febf::1]", "link-local top"],
  ["[fc00::1]", "ULA fc00::/7"],
  ["[fd12:3456:789a::1]", "ULA fd00::/8"],
  ["[fec0::1]", "site-local (deprecated)"],
  ["[ff02::1]", "multicast all-nodes"],
  ["[ff05::1:3]", "multicast site-local"],
  ["[2001:db8::1]", "documentation"],
  ["[3fff::1]", "documentation 3fff::/20"],
  ["[2001:2::1]", "benchmarking"],
  ["[100::1]", "discard-only"],
  ["[2001:10::1]", "ORCHID"],
  ["[2001:20::1]", "ORCHIDv2"],
  ["[4000::1]", "outside 2000::/3"],
  ["[5f00::1]", "SRv6 SIDs"],
];

describe("refused host forms", () => {
  test("the table is large enough to mean something", () => {
    expect(REFUSED_HOSTS.length).toBeGreaterThanOrEqual(40);
  });

  test.each(REFUSED_HOSTS)("%s (%s) is refused", (host) => {
    expect(hostVerdict(host)).toBe("refused");
  });
});

describe("public addresses", () => {
  test.each([
    ["8.8.8.8"],
    ["1.1.1.1"],
    ["93.184.216.34"],
    ["151.101.1.69"],
    ["100.63.255.255"], // just below CGNAT
    ["100.128.0.0"], // just above CGNAT
    ["172.15.255.255"], // just below 172.16/12
    ["172.32.0.0"], // just above
    ["192.175.48.1"], // AS112 anycast: globally reachable
    ["[2606:4700:4700::1111]"],
    ["[2001:4860:4860::8888]"],
    ["[2a00:1450:4001:80b::200e]"],
    ["[::ffff:8.8.8.8]"], // IPv4-mapped public: dialled as 8.8.8.8
    ["[64:ff9b::8.8.8.8]"], // NAT64 of a public address
  ])("%s is accepted", (host) => {
    expect(hostVerdict(host)).toBe("public");
  });

  test("decimal and hex forms of a public address are accepted as that address", () => {
    expect(parseHostLiteral("134744072")).toEqual({ kind: "ipv4", address: "8.8.8.8" });
    expect(parseHostLiteral("0x8.0x8.0x8.0x8")).toEqual({ kind: "ipv4", address: "8.8.8.8" });
    expect(hostVerdict("134744072")).toBe("public");
  });
});

describe("parseHostLiteral", () => {
  test.each([
    ["Example.COM.", { kind: "name", name: "example.com" }],
    ["localhost", { kind: "name", name: "localhost" }],
    ["xn--bcher-kva.example", { kind: "name", name: "xn--bcher-kva.example" }],
    ["bücher.example", { kind: "name", name: "xn--bcher-kva.example" }],
    ["[::FFFF:127.0.0.1]", { kind: "ipv6", address: "::ffff:7f00:1" }],
    ["::1", { kind: "ipv6", address: "::1" }],
  ])("%s", (host, expected) => {
    expect(parseHostLiteral(host)).toEqual(expected as never);
  });

  test.each(["", "1.2.3.256", "1.2.3.4.5", "0x1g.1", "09.1.1.1", "localhost:80", "a/b", "user@host", "[fe80::1%25eth0]", "[::1"])(
    "%p is invalid",
    (host) => {
      expect(parseHostLiteral(host)).toEqual({ kind: "invalid" });
    },
  );

  test("agrees with the URL parser fetch uses", () => {
    for (const host of ["2130706433", "0x7f.1", "0177.0.0.1", "127.1"]) {
      const literal = parseHostLiteral(host);
      expect(literal.kind).toBe("ipv4");
      expect(new URL(`https://${host}/`).hostname).toBe(literal.kind === "ipv4" ? literal.address : "");
    }
  });
});

describe("classifyAddress", () => {
  test("reports the unwrapped IPv4 and why it decided", () => {
    const c = classifyAddress("64:ff9b::a9fe:a9fe");
    expect(c).toMatchObject({ family: 6, wrapping: "nat64", isPublic: false });
    expect(c.embedded?.[0]).toMatchObject({ address: "169.254.169.254", range: "linkLocal", isPublic: false });
    expect(classifyAddress("fe80::1%eth0")).toMatchObject({ range: "zoned", isPublic: false });
    expect(classifyAddress("example.com")).toMatchObject({ family: 0, range: "invalid", isPublic: false });
  });

  test("takes only canonical IPv4: sloppy forms must go through parseHostLiteral first", () => {
    expect(classifyAddress("0177.0.0.1").isPublic).toBe(false);
    expect(classifyAddress("0177.0.0.1").family).toBe(0);
  });
});

// ---- properties: notation never changes the verdict ----

/** Special IPv4 blocks (base, prefix length) that must be refused whatever they are written as. */
const NON_PUBLIC_V4: [number, number][] = [
  [0x00000000, 8],
  [0x0a000000, 8],
  [0x64400000, 10],
  [0x7f000000, 8],
  [0xa9fe0000, 16],
  [0xac100000, 12],
  [0xc0000000, 24],
  [0xc0000200, 24],
  [0xc0a80000, 16],
  [0xc6120000, 15],
  [0xc6336400, 24],
  [0xcb007100, 24],
  [0xe0000000, 4],
  [0xf0000000, 4],
];

const arbNonPublicV4 = fc
  .tuple(fc.constantFrom(...NON_PUBLIC_V4), fc.integer({ min: 0, max: 0xffffffff }))
  .map(([[base, len], r]) => (base | (len === 32 ? 0 : r >>> len)) >>> 0);

const octets = (n: number): number[] => [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const hex16 = (n: number): string => (n & 0xffff).toString(16);
const part = (v: number, style: number): string =>
  style === 0 ? String(v) : style === 1 ? `0${v.toString(8)}` : `0x${v.toString(16)}`;

/** Every way a URL may spell one IPv4 address, directly or inside IPv6. */
const NOTATIONS: ((n: number, style: number) => string)[] = [
  (n) => octets(n).join("."),
  (n, s) => octets(n).map((o) => part(o, s)).join("."),
  (n, s) => part(n, s),
  (n, s) => { const o = octets(n); return `${part(o[0] ?? 0, s)}.${part(n & 0xffffff, s)}`; },
  (n, s) => { const o = octets(n); return `${part(o[0] ?? 0, s)}.${part(o[1] ?? 0, s)}.${part(n & 0xffff, s)}`; },
  (n) => `${octets(n).join(".")}.`,
  (n) => `[::ffff:${octets(n).join(".")}]`,
  (n) => `[::ffff:${hex16(n >>> 16)}:${hex16(n)}]`,
  (n) => `[0:0:0:0:0:FFFF:${hex16(n >>> 16)}:${hex16(n)}]`,
  (n) => `[64:ff9b::${octets(n).join(".")}]`,
  (n) => `[64:ff9b::${hex16(n >>> 16)}:${hex16(n)}]`,
  (n) => `[2002:${hex16(n >>> 16)}:${hex16(n)}::1]`,
  (n) => `[::ffff:0:${octets(n).join(".")}]`,
];

describe("properties", () => {
  test("every address in a non-public IPv4 block is refused, in any notation", () => {
    fc.assert(
      fc.property(arbNonPublicV4, fc.nat(NOTATIONS.length - 1), fc.nat(2), (n, which, style) => {
        const host = (NOTATIONS[which] ?? NOTATIONS[0]!)(n, style);
        expect(hostVerdict(host)).toBe("refused");
      }),
      { numRuns: 5_000 },
    );
  });

  test("any IPv4 address gets the same verdict in every notation as in dotted-quad", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.nat(NOTATIONS.length - 1), fc.nat(2), (n, which, style) => {
        const canonical = isPublicUnicast(octets(n).join("."));
        const host = (NOTATIONS[which] ?? NOTATIONS[0]!)(n, style);
        expect(hostVerdict(host)).toBe(canonical ? "public" : "refused");
      }),
      { numRuns: 5_000 },
    );
  });

  test("every address in a non-public IPv6 block is refused", () => {
    const blocks = ["fe80", "fc00", "fd00", "fec0", "ff00", "ff02"];
    fc.assert(
      fc.property(fc.constantFrom(...blocks), fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 7, maxLength: 7 }), (top, rest) => {
        const first = (parseInt(top, 16) | ((rest[0] ?? 0) & (top === "fe80" || top === "fec0" ? 0x3f : top === "fc00" ? 0x1ff : 0xff))) & 0xffff;
        const address = [first, ...rest.slice(1), rest[0] ?? 0].map(hex16).join(":");
        expect(isPublicUnicast(address)).toBe(false);
      }),
      { numRuns: 2_000 },
    );
  });
});
