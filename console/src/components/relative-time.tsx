import { useEffect, useState } from "preact/hooks";

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ["day", 86_400_000],
  ["hour", 3_600_000],
  ["minute", 60_000],
  ["second", 1000],
];
const format = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

export function relative(at: Date, now: number = Date.now()): string {
  const diff = at.getTime() - now;
  for (const [unit, ms] of UNITS) {
    if (Math.abs(diff) >= ms || unit === "second") return format.format(Math.round(diff / ms), unit);
  }
  return "";
}

/** "3 minutes ago" / "in 11 hours", the exact time on hover, refreshed every 30 s. */
export function RelativeTime(props: { value: string | Date | undefined; class?: string }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(t);
  }, []);
  if (props.value === undefined || props.value === "") return <span class={props.class}>—</span>;
  const at = props.value instanceof Date ? props.value : new Date(props.value);
  if (Number.isNaN(at.getTime())) return <span class={props.class}>—</span>;
  return (
    <time class={props.class} dateTime={at.toISOString()} title={at.toLocaleString()}>
      {relative(at, now)}
    </time>
  );
}
