// Plays one recorded session (asciicast v2 from GET /v1/webapi/sessions/:id/recording) in
// asciinema-player, with our own play/pause, seek and speed controls next to the player's bar.
// The player takes its speed at creation only, so a new speed re-creates it at the same moment.
import { create, type Player } from "asciinema-player";
import "asciinema-player/dist/bundle/asciinema-player.css";
import { useEffect, useRef, useState } from "preact/hooks";
import { useRoute } from "preact-iso";
import { ApiError, api, unwrap } from "../api/client.ts";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Page } from "../components/page.tsx";
import { RelativeTime } from "../components/relative-time.tsx";
import "./recordings.css";

/** Pauses longer than this are shortened when playing, as the old player did. */
const IDLE_LIMIT_S = 2;
const SPEEDS = [0.5, 1, 2, 4, 8] as const;
const STEP_S = 5;

type State = "loading" | "ready" | "playing" | "paused" | "ended" | "error";

interface CastHeader {
  width?: number;
  height?: number;
  timestamp?: number;
}

export function castHeader(text: string): CastHeader {
  const first = text.slice(0, text.indexOf("\n") >>> 0);
  try {
    const h = JSON.parse(first) as unknown;
    return typeof h === "object" && h !== null ? (h as CastHeader) : {};
  } catch {
    return {};
  }
}

export function clock(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return "–:––";
  const s = Math.max(0, Math.floor(seconds));
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, "0")}`;
}

/**
 * Whether this document was loaded for a player page. Only then does it carry the player's CSP
 * (WebAssembly allowed); reached by a client-side route change (history, a plain link) it has the
 * policy of the page it was loaded for, and the player page loads itself anew.
 */
function servedAsPlayer(): boolean {
  const nav = performance.getEntriesByType("navigation")[0];
  return nav === undefined || /^\/web\/recordings\/[^/]+$/.test(new URL(nav.name).pathname);
}

declare global {
  interface Window {
    /** The page's player, for the browser tests. */
    svcPlayer?: Player;
  }
}

export default function RecordingPage() {
  const { params } = useRoute();
  const id = params["id"] ?? "";
  const host = useRef<HTMLDivElement>(null);
  const player = useRef<Player | undefined>(undefined);
  // Whether the player is, or is about to be, playing: true from the start (it plays by itself,
  // a moment after creation), then as its events say. A new speed keeps it.
  const playingRef = useRef(true);
  // A new player autoplays a moment after creation, and until then pause() does nothing: a pause
  // asked for in that moment is kept and carried out when playback starts.
  const startedRef = useRef(false);
  const pauseWantedRef = useRef(false);
  const [cast, setCast] = useState<string | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [state, setState] = useState<State>("loading");
  const [speed, setSpeed] = useState(1);
  const [time, setTime] = useState(0);
  const [duration, setDuration] = useState<number | undefined>(undefined);

  const fresh = servedAsPlayer();
  useEffect(() => {
    if (!fresh) location.reload();
  }, [fresh]);

  useEffect(() => {
    if (!fresh) return;
    let live = true;
    setCast(undefined);
    setState("loading");
    unwrap(api.GET("/v1/webapi/sessions/{id}/recording", { params: { path: { id } }, parseAs: "text" }))
      .then((text) => live && setCast(String(text)))
      .catch((e: unknown) => {
        if (!live) return;
        setError(
          e instanceof ApiError && e.status === 404
            ? new Error("No such recording, or it is not yours to see.")
            : e,
        );
        setState("error");
      });
    return () => {
      live = false;
    };
  }, [id, fresh]);

  // (Re)creates the player for this recording and speed, at the moment the previous one was.
  useEffect(() => {
    const el = host.current;
    if (cast === undefined || !el) return;
    const previous = player.current;
    const at = previous?.getCurrentTime() ?? 0;
    const wasPlaying = playingRef.current;
    previous?.dispose();
    const p = create({ data: cast }, el, {
      speed,
      idleTimeLimit: IDLE_LIMIT_S,
      fit: "width",
      preload: true,
      controls: true,
      autoPlay: wasPlaying,
      ...(at > 0 ? { startAt: at } : {}),
    });
    player.current = p;
    window.svcPlayer = p;
    startedRef.current = false;
    const on = (playingNow: boolean, next: State) => () => {
      playingRef.current = playingNow;
      setState(next);
    };
    p.addEventListener("playing", () => {
      startedRef.current = true;
      if (pauseWantedRef.current) {
        pauseWantedRef.current = false;
        // Not from inside the player's own event: it is still finishing its start then.
        setTimeout(() => void p.pause(), 0);
        return;
      }
      on(true, "playing")();
    });
    p.addEventListener("pause", on(false, "paused"));
    p.addEventListener("ended", on(false, "ended"));
    if (previous !== undefined) setState(wasPlaying ? "playing" : "paused");
    else setState("ready");
    const tick = setInterval(() => {
      setTime(p.getCurrentTime());
      setDuration(p.getDuration());
    }, 200);
    return () => clearInterval(tick);
  }, [cast, speed]);

  useEffect(
    () => () => {
      player.current?.dispose();
      player.current = undefined;
      window.svcPlayer = undefined;
    },
    [],
  );

  const p = player.current;
  const playing = state === "playing";
  // The handlers read the player in service now: a speed change replaces it without always
  // rendering again, so the one this render saw may be disposed already.
  const toggle = (): void => {
    const p = player.current;
    if (!p) return;
    if (!playing) {
      pauseWantedRef.current = false;
      void p.play();
    } else if (startedRef.current) void p.pause();
    else pauseWantedRef.current = true;
  };
  const seek = (to: number): void => {
    const p = player.current;
    if (!p) return;
    const end = duration ?? to;
    void p.seek(Math.min(Math.max(0, to), end)).then(() => setTime(p.getCurrentTime()));
  };
  const header = cast ? castHeader(cast) : {};
  const statusText: Record<State, string> = {
    loading: "Loading the recording…",
    ready: "Ready",
    playing: "Playing",
    paused: "Paused",
    ended: "End of recording",
    error: "Could not load the recording",
  };

  return (
    <Page title="Session recording" actions={<a href="/web/recordings">All recordings</a>}>
      <p class="recording-meta">
        <span class="mono">{id}</span>
        {header.timestamp ? (
          <>
            {" · recorded "}
            <RelativeTime value={new Date(header.timestamp * 1000)} />
          </>
        ) : null}
        {header.width && header.height ? ` · ${header.width}×${header.height}` : null}
        {" · "}
        <a href={`/v1/webapi/sessions/${encodeURIComponent(id)}/recording`} download={`${id}.cast`}>
          Download (.cast)
        </a>
      </p>
      <ErrorBanner error={error} />
      <fieldset class="player-controls">
        <legend class="visually-hidden">Playback</legend>
        <button type="button" id="play" disabled={!p} onClick={toggle}>
          {playing ? "Pause" : state === "ended" ? "Replay" : "Play"}
        </button>
        <button type="button" class="secondary" id="back" disabled={!p} onClick={() => seek(time - STEP_S)}>
          −{STEP_S} s
        </button>
        <label class="seek">
          <span class="visually-hidden">Position</span>
          <input
            type="range"
            id="seek"
            min={0}
            max={duration ?? 0}
            step="any"
            value={time}
            disabled={!p || duration === undefined}
            aria-valuetext={`${clock(time)} of ${clock(duration)}`}
            onInput={(e) => seek(Number((e.currentTarget as HTMLInputElement).value))}
          />
        </label>
        <button
          type="button"
          class="secondary"
          id="forward"
          disabled={!p}
          onClick={() => seek(time + STEP_S)}
        >
          +{STEP_S} s
        </button>
        <span id="clock" class="mono">
          {clock(time)} / {clock(duration)}
        </span>
        <label class="speed">
          Speed
          <select
            id="speed"
            value={String(speed)}
            onChange={(e) => setSpeed(Number((e.currentTarget as HTMLSelectElement).value))}
          >
            {SPEEDS.map((s) => (
              <option key={s} value={String(s)}>
                {s}×
              </option>
            ))}
          </select>
        </label>
        <span id="status" role="status" data-state={state}>
          {statusText[state]}
        </span>
      </fieldset>
      <div ref={host} id="player" class="player" />
    </Page>
  );
}
