// Placeholder: the page's owner replaces it (docs/console.md).
import { Page } from "../components/page.tsx";

export default function AccountPage() {
  return <Page title="Account" />;
}
