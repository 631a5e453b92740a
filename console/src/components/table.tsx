import type { ComponentChildren } from "preact";

export interface Column<T> {
  /** A stable key for the column (also its data-col attribute, for tests). */
  key: string;
  header: ComponentChildren;
  render: (row: T) => ComponentChildren;
  /** Hidden below 640 px wide. */
  wide?: boolean;
}

export interface TableProps<T> {
  /** What the table lists, read by screen readers. */
  caption: string;
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  id?: string;
  /** Shown in place of the table when there are no rows. */
  empty?: ComponentChildren;
}

/** A data table that scrolls sideways on narrow screens instead of breaking the page. */
export function Table<T>(props: TableProps<T>) {
  if (props.rows.length === 0 && props.empty) return <>{props.empty}</>;
  return (
    <div class="table-wrap">
      <table id={props.id}>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th key={c.key} scope="col" data-col={c.key} class={c.wide ? "wide" : undefined}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={props.rowKey(row)} data-key={props.rowKey(row)}>
              {props.columns.map((c) => (
                <td key={c.key} data-col={c.key} class={c.wide ? "wide" : undefined}>
                  {c.render(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
