import { describeError } from "../api/client.ts";

/** An error as a sentence, announced to screen readers; nothing when there is none. */
export function ErrorBanner(props: { error: unknown; id?: string }) {
  return (
    <div id={props.id} class="error" role="alert">
      {props.error === undefined || props.error === null ? "" : describeError(props.error)}
    </div>
  );
}
