// The store's calendar days (docs/admin.md, "Pages"): "Today", the day at a glance and the order
// list's date ranges are days of STORE_TIMEZONE, which the session answer names, whatever zone
// the browser is in. Intl gives a zone's offset at any instant, summer time included.
import { currentSession } from "./api";

/** The store's IANA time zone (UTC before the session is read). */
export const storeZone = () => currentSession()?.timezone ?? "UTC";

const offsets = new Map<string, Intl.DateTimeFormat>();
/** The zone's offset from UTC at instant `t`, in minutes (Stockholm in winter: 60). */
function offsetAt(zone: string, t: number): number {
  let f = offsets.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" });
    offsets.set(zone, f);
  }
  const name = f.formatToParts(t).find((p) => p.type === "timeZoneName")?.value ?? "GMT";
  const m = /GMT([+-])(\d{2}):?(\d{2})?/.exec(name);
  return m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0)) : 0;
}

const two = (n: number) => String(n).padStart(2, "0");
const offsetText = (min: number) =>
  `${min < 0 ? "-" : "+"}${two(Math.floor(Math.abs(min) / 60))}:${two(Math.abs(min) % 60)}`;

/** The calendar day ("2026-12-01") it is in the store at instant `t`. */
export function dayOf(t: number, zone = storeZone()): string {
  const d = new Date(t + offsetAt(zone, t) * 60_000);
  return d.toISOString().slice(0, 10);
}

/**
 * The first moment of store day `day` ("2026-12-01"), or with `end` its last, as ISO 8601 with the
 * store's offset then, which GET /v1/orders' created_from and created_to take.
 */
export function dayBound(day: string, end: boolean, zone = storeZone()): string {
  const wall = Date.parse(`${day}T${end ? "23:59:59.999" : "00:00:00"}Z`);
  // The offset at the wall time, then at the instant it gives: right across a change of summer time.
  let off = offsetAt(zone, wall);
  off = offsetAt(zone, wall - off * 60_000);
  return `${day}T${end ? "23:59:59.999" : "00:00:00"}${offsetText(off)}`;
}

/** The store's zone and its offset now, as the pages show it: "America/New_York (UTC-05:00)". */
export const zoneLabel = (zone = storeZone(), t = Date.now()) => `${zone} (UTC${offsetText(offsetAt(zone, t))})`;
