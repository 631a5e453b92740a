// Placeholder: the page's owner replaces it (docs/console.md).
import { Page } from "../components/page.tsx";

export default function ResetPage() {
  return <Page title="Choose a password" />;
}
