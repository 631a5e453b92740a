// First: takes the reset token out of the address (reset-token.ts).
import "./reset-token.ts";
import { render } from "preact";
import { App } from "./app.tsx";
import "./styles.css";

const root = document.getElementById("app");
if (root) render(<App />, root);
