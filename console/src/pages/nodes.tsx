// Placeholder: the page's owner replaces it (docs/console.md).
import { Page } from "../components/page.tsx";

export default function NodesPage() {
  return <Page title="Nodes" />;
}
