// Placeholder: the page's owner replaces it (docs/console.md).
import { Page } from "../components/page.tsx";

export default function UsersPage() {
  return <Page title="Users" />;
}
