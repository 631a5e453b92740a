import type { ComponentChildren } from "preact";
import { useEffect } from "preact/hooks";

/** Every page: one h1 (also the document title) and its content. */
export function Page(props: { title: string; actions?: ComponentChildren; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${props.title} · svc`;
  }, [props.title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <div class="page-head">
        <h1 id="page-title">{props.title}</h1>
        {props.actions ? <div class="page-actions">{props.actions}</div> : null}
      </div>
      {props.children}
    </section>
  );
}
