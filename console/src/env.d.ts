// Stylesheets are imported for their side effect (Vite bundles them into hashed CSS files).
declare module "*.css";
