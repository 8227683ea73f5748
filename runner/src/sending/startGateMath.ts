/**
 * The start gate's arithmetic, in one place for the gate's scripts (spacing.ts), the settle that
 * takes a send job's next place (ledger.ts) and the tests: how long the rate span is, how many starts a
 * second may hold, and how far apart the number's clock hands out places. Each takes the room
 * (below) as a share of a second: RUNNER_RATE_ROOM / 1000, the same on every process of a number.
 */

/**
 * How much longer than a second the rate span is, by default (RUNNER_RATE_ROOM 40ms): room in time
 * for the way to the service. Between a start taken here and its arrival at the service, sends bunch
 * by up to about 35 ms (event loops, GC pauses on both sides; 3 to 7 sends at 100-200/s), so the
 * starts of any second of arrivals lie within 1.04 s, and `rate` starts per 1.04 s keep every
 * second at the service at or under the rate. The room is time, not a count of starts: a room of
 * whole starts (the rate less 4% rounded up) held 10/s to 9/s and 4/s to 3/s, 0.9 and 0.75 of the
 * rate (deadjobs.test.ts, spacing.test.ts), where the same 40 ms is a fraction of one start.
 */
export const SPAN_ROOM = 0.04;

/** The room of RUNNER_RATE_ROOM (ms) as a share of a second, as the scripts take it. */
export const roomOf = (config: { RUNNER_RATE_ROOM: number }) => config.RUNNER_RATE_ROOM / 1000;

/** The rate span, ms: a start needs fewer than `rate` starts in the last rateSpanMs(room). */
export const rateSpanMs = (room = SPAN_ROOM) => 1000 * (1 + room);

/** The rate span at the default room: 1,040 ms. */
export const RATE_SPAN_MS = rateSpanMs();

/**
 * Starts allowed in any one second at `rate`: the rate less its room in whole starts, rounded
 * down (96 at 100/s, 10 at 10/s). The longer span alone lets a whole `rate` of starts bunch into
 * one second after a stall, and a later stall on the way to the service then pushed a second of
 * arrivals to 113 at 100/s (the container test, the runner container killed mid-campaign); this
 * keeps the room in starts where the rate is high enough to have any, and costs low rates nothing.
 */
export const secondCap = (rate: number, room = SPAN_ROOM) => rate - Math.floor(rate * room);

/**
 * The most starts one second may hold when its latest start is a volley of `n`: a volley, as a lone
 * start, needs fewer than the cap before it (lua/includes/takePlace.lua reads that rank), so its
 * starts after its first come on top (991 for a volley of 10 at 1,000/s and a room of 18 ms); the
 * rate span, which holds the second, keeps it at the rate or under. Counted whole against the cap,
 * a second took only whole volleys (98 of 10 under 982), which held 1,000/s under 0.98 at any room
 * and made every volley at 18 ms call the gate twice.
 */
export const volleyCap = (rate: number, n: number, room = SPAN_ROOM) => secondCap(rate, room) + n - 1;

/**
 * How much wider than the rate span's own pace the clock spaces places. Spaced exactly at the pace,
 * a full span's worth of places ends where the next begins, so a send that woke a little less
 * late than the one `rate` places before it found the span full and had to call again: 1.6
 * extra gate calls per send at 1,000/s (about 13 Redis commands per recipient). The
 * slack gives such wakes about 2 ms a span; it costs 0.2% of the rate. lua/includes/startGateMath.lua
 * repeats the figure.
 */
const CLOCK_SLACK = 0.002;

/** Microseconds between two places on the number's clock at `rate`. */
const gapUs = (rate: number, room: number) =>
	Math.max((1_000_000 * (1 + room)) / rate, 1_000_000 / secondCap(rate, room)) * (1 + CLOCK_SLACK);

/**
 * Starts per second the gate lets through at `rate`, sustained: 1 / (1 + room) of it or a little
 * less, 0.958 at the default room (the scripts compute the same).
 */
export const gateRate = (rate: number, room = SPAN_ROOM) => 1_000_000 / gapUs(rate, room);

/**
 * How long, on a process's clock, the answer granting a start may take to arrive before the start is
 * given back and taken again (spacing.ts), and how late after its place a send may come and still
 * count at its place (lua/start-11.lua): half and a quarter of the room, 20 and 10 ms at the
 * default. The rest of the room is for the way to the service.
 */
export const freshStartMs = (room = SPAN_ROOM) => (room * 1000) / 2;
export const placeLateMs = (room = SPAN_ROOM) => (room * 1000) / 4;

/** The most starts a send job takes together, whatever the rate and RUNNER_SEND_VOLLEY. */
export const MAX_VOLLEY = 20;

/**
 * How many starts a send job takes together at `rate` (lua/includes/startGateMath.lua computes the
 * same): the rate's starts in `volleyMs` (RUNNER_SEND_VOLLEY), at least one, at most MAX_VOLLEY
 * and the last second's cap. A volley's sends go out at once and the number's clock moves on by one
 * gap per start, so the rate is the same; a volley's claim and its settle are one call each.
 */
export const volleySize = (rate: number, volleyMs: number, room = SPAN_ROOM) =>
	rate > 0 ? Math.max(1, Math.min(MAX_VOLLEY, secondCap(rate, room), Math.floor((rate * volleyMs) / 1000))) : 1;
