// Apps: the web applications the user's roles reach (GET /v1/webapi/apps, decided by auth), each
// with its address and a Launch link that opens the app's own host in a new tab; the proxy there
// sends the browser through /web/launch for an app session (launch.tsx). The filter is on this
// page (a user reaches a handful of apps, never thousands) and lives in the query string.
import { useEffect, useState } from "preact/hooks";
import { EmptyState } from "../components/empty-state.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { FilterBar, useQueryParams } from "../components/filter-bar.tsx";
import { Page } from "../components/page.tsx";
import { type Column, Table } from "../components/table.tsx";
import { type AppItem, listApps } from "./apps-api.ts";
// The label chips look as they do on the nodes page.
import "./nodes.css";
import "./apps.css";

const sortedLabels = (app: AppItem): Array<[string, string]> =>
  Object.entries(app.labels ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));

/**
 * Whether `app` matches every word of `search` (case-insensitive): in its name, description,
 * address, or a label as `key=value`.
 */
export function appMatches(app: AppItem, search: string): boolean {
  const haystack = [
    app.name,
    app.description ?? "",
    app.public_addr,
    ...sortedLabels(app).map(([k, v]) => `${k}=${v}`),
  ]
    .join("\n")
    .toLowerCase();
  return search
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== "")
    .every((w) => haystack.includes(w));
}

/** What an administrator does to add an App (shown when the user reaches none). */
const EXAMPLE = `apiVersion: svc.dev/v1
kind: App
metadata:
  name: grafana
  labels:
    env: prod
spec:
  uri: http://grafana.internal:3000
  description: Dashboards`;

function NoApps() {
  return (
    <EmptyState title="No apps for you yet">
      <p>
        An administrator adds an App with a manifest: a file in the manifests folder of{" "}
        <code>svcd start</code>, or <code>kubectl apply -f app.yaml</code> on Kubernetes. A role whose{" "}
        <code>app_labels</code> match the App's labels lets its users reach it, at{" "}
        <code>https://&lt;name&gt;.&lt;proxy host&gt;</code>.
      </p>
      <p>For example:</p>
      <pre class="app-example">{EXAMPLE}</pre>
    </EmptyState>
  );
}

export default function AppsPage() {
  const [query, setQuery] = useQueryParams();
  const [apps, setApps] = useState<AppItem[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const search = query["search"] ?? "";

  useEffect(() => {
    let live = true;
    listApps()
      .then((list) => {
        if (!live) return;
        setApps([...list].sort((a, b) => (a.name < b.name ? -1 : 1)));
        setError(undefined);
      })
      .catch((err: unknown) => live && setError(err));
    return () => {
      live = false;
    };
  }, []);

  const shown = apps?.filter((a) => appMatches(a, search));
  const columns: Column<AppItem>[] = [
    {
      key: "name",
      header: "App",
      render: (a) => (
        <div class="app-name">
          <span class="mono">{a.name}</span>
          {a.description ? <span class="app-description">{a.description}</span> : null}
        </div>
      ),
    },
    {
      key: "labels",
      header: "Labels",
      wide: true,
      render: (a) => (
        <ul class="label-list" aria-label={`Labels of ${a.name}`}>
          {sortedLabels(a).map(([k, v]) => (
            <li key={k}>
              <button
                type="button"
                class="label-chip"
                title={`Show only apps with ${k}=${v}`}
                onClick={() => setQuery({ search: `${k}=${v}` })}
              >
                {k}={v}
              </button>
            </li>
          ))}
        </ul>
      ),
    },
    {
      key: "address",
      header: "Address",
      render: (a) => <span class="mono app-address">{a.public_addr}</span>,
    },
    {
      key: "launch",
      header: "Launch",
      render: (a) => (
        // A new tab of the app's own origin: no opener (the app cannot reach the console's
        // window) and no Referer.
        <a class="button launch" href={a.public_url} target="_blank" rel="noopener noreferrer">
          Launch<span class="visually-hidden"> {a.name} (opens a new tab)</span>
        </a>
      ),
    },
  ];

  const count = shown?.length;
  return (
    <Page
      title="Apps"
      actions={
        count === undefined ? null : (
          <span id="app-count" class="muted" aria-live="polite">
            {count.toLocaleString()} {count === 1 ? "app" : "apps"}
          </span>
        )
      }
    >
      <FilterBar
        label="Filter apps"
        onApply={(v) => setQuery({ search: v["search"] })}
        onClear={() => setQuery({ search: undefined })}
      >
        <label>
          Search
          <input
            id="app-search"
            name="search"
            type="search"
            placeholder="name or env=prod"
            defaultValue={search}
            key={`s-${search}`}
            maxLength={256}
          />
        </label>
      </FilterBar>
      <ErrorBanner id="apps-error" error={error} />
      <div id="apps" aria-busy={apps === undefined && error === undefined ? "true" : "false"}>
        {shown ? (
          <Table
            id="apps-table"
            caption="Apps you may use"
            columns={columns}
            rows={shown}
            rowKey={(a) => a.name}
            empty={
              apps?.length === 0 ? (
                <NoApps />
              ) : (
                <EmptyState title="No app matches this search">
                  <p>Change or clear the search.</p>
                </EmptyState>
              )
            }
          />
        ) : null}
      </div>
    </Page>
  );
}
