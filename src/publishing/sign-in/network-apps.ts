/**
 * What each network with an instance-wide app asks of the instance admin (decisions.md §12): its name, the scopes
 * Seedcast asks for (the one list its sign-in uses), the products to enable, where its developer console is, what the
 * network demands, and the setup in plain words. The Instance page shows it; docs/networks.md says the same.
 */
import type { AppNetwork } from "../../config";

/** One network's app setup. */
export interface NetworkAppGuide {
  /** The network's name in sentences ("X", "Facebook Pages"). */
  name: string;
  /** What the network calls the app's id and secret. */
  idLabel: string;
  secretLabel: string;
  /** The scopes (permissions) Seedcast asks for at sign-in. */
  scopes: readonly string[];
  /** The products / use cases to add to the app. */
  products: readonly string[];
  /** The developer console. */
  consoleUrl: string;
  /** What the network demands beyond the app (paid access, account kinds, token lifetimes). */
  demands: readonly string[];
  /** The setup, step by step; `{redirect}` stands for the redirect URI to register. */
  steps: readonly string[];
}

/** The guides, per network. */
export const NETWORK_APP_GUIDES: Readonly<Record<AppNetwork, NetworkAppGuide>> = {
  x: {
    name: "X",
    idLabel: "OAuth 2.0 Client ID",
    secretLabel: "OAuth 2.0 Client Secret",
    scopes: ["tweet.read", "tweet.write", "users.read", "media.write", "offline.access"],
    products: ["User authentication settings: OAuth 2.0, app permissions \"Read and write\", type \"Web App, Automated App or Bot\""],
    consoleUrl: "https://developer.x.com/en/portal/dashboard",
    demands: [
      "X's API is pay-per-use: posting needs API credits bought in the developer console; without them X refuses posts.",
      "Access tokens last 2 hours; Seedcast refreshes them by itself (that is what offline.access is for).",
    ],
    steps: [
      "Sign in at developer.x.com with the X account that will own the app, and open the developer console.",
      "Create a project and an app in it (any name, such as \"Seedcast\").",
      "In the app, open \"User authentication settings\" and press Set up.",
      "Choose the permissions \"Read and write\" and the type \"Web App, Automated App or Bot\".",
      "Paste {redirect} as the Callback URI, and this server's address as the Website URL; save.",
      "X now shows the OAuth 2.0 Client ID and Client Secret (the secret only once): copy both into the fields below.",
      "Buy API credits in the console if you have none: X refuses posts without them.",
    ],
  },
  linkedin: {
    name: "LinkedIn",
    idLabel: "Client ID",
    secretLabel: "Primary Client Secret",
    scopes: ["openid", "profile", "w_member_social"],
    products: ["Share on LinkedIn", "Sign In with LinkedIn using OpenID Connect"],
    consoleUrl: "https://www.linkedin.com/developers/apps",
    demands: [
      "LinkedIn's tokens last 60 days and cannot be refreshed by ordinary apps: people reconnect every 60 days (Seedcast warns 7 days before).",
      "LinkedIn versions its API by month and retires each version after about a year: Seedcast pins one, and an upgrade of Seedcast moves it.",
      "Creating the app needs a LinkedIn Page to associate it with (any Page you administer).",
    ],
    steps: [
      "Open the LinkedIn developer portal and press Create app; name it, pick your LinkedIn Page and a logo; create it.",
      "On the Products tab, request \"Share on LinkedIn\" and \"Sign In with LinkedIn using OpenID Connect\" (both are granted at once).",
      "On the Auth tab, under \"Authorized redirect URLs for your app\", add {redirect}.",
      "On the same tab, copy the Client ID and the Primary Client Secret into the fields below.",
    ],
  },
  facebook: {
    name: "Facebook Pages",
    idLabel: "App ID",
    secretLabel: "App Secret",
    scopes: ["pages_show_list", "pages_manage_posts", "pages_read_engagement"],
    products: ["Use case \"Manage everything on your Page\"", "Facebook Login for Business (or Facebook Login)"],
    consoleUrl: "https://developers.facebook.com/apps",
    demands: [
      "Until Meta's App Review grants the permissions, only people with a role on the app (admins, developers, testers) can connect their Pages.",
      "Posts are held by Facebook itself when due more than 10 minutes ahead.",
    ],
    steps: [
      "Open Meta for Developers, press Create app, and choose the use case \"Manage everything on your Page\".",
      "In the app's use case, add the permissions pages_show_list, pages_manage_posts and pages_read_engagement.",
      "Under Facebook Login settings, add {redirect} to \"Valid OAuth Redirect URIs\" and save.",
      "Under App settings → Basic, copy the App ID and the App Secret into the fields below.",
      "To let people outside your team connect, submit the permissions to App Review and switch the app to Live.",
    ],
  },
  instagram: {
    name: "Instagram",
    idLabel: "Instagram app ID",
    secretLabel: "Instagram app secret",
    scopes: ["instagram_business_basic", "instagram_business_content_publish"],
    products: ["Use case \"Manage messaging & content on Instagram\", API setup with Instagram login"],
    consoleUrl: "https://developers.facebook.com/apps",
    demands: [
      "Only professional accounts (Business or Creator) can post through the API: switch the account in Instagram's settings first.",
      "Instagram fetches the images from this server: BASE_URL must be a public https address.",
      "Tokens last 60 days; Seedcast refreshes them before they end.",
    ],
    steps: [
      "Open Meta for Developers, press Create app, and choose the use case \"Manage messaging & content on Instagram\".",
      "Open \"API setup with Instagram login\"; under \"Set up Instagram business login\", add {redirect} as an OAuth redirect URI.",
      "Copy the Instagram app ID and Instagram app secret shown there (not the Meta app ID) into the fields below.",
      "Until the app passes App Review, add the Instagram accounts that will connect as Instagram testers, and accept the invitation in Instagram.",
    ],
  },
  threads: {
    name: "Threads",
    idLabel: "Threads app ID",
    secretLabel: "Threads app secret",
    scopes: ["threads_basic", "threads_content_publish", "threads_manage_replies"],
    products: ["Use case \"Access the Threads API\""],
    consoleUrl: "https://developers.facebook.com/apps",
    demands: [
      "Threads fetches images from this server: BASE_URL must be a public https address for posts with images.",
      "Tokens last 60 days; Seedcast refreshes them before they end.",
    ],
    steps: [
      "Open Meta for Developers, press Create app, and choose the use case \"Access the Threads API\".",
      "In the use case, add the permissions threads_basic, threads_content_publish and threads_manage_replies.",
      "Under Settings, add {redirect} to the Redirect Callback URLs (and the uninstall and delete callbacks if asked).",
      "Copy the Threads app ID and Threads app secret into the fields below.",
      "Until the app passes App Review, add the Threads accounts that will connect as Threads testers, and accept in Threads (Settings → Account → Website permissions).",
    ],
  },
  pinterest: {
    name: "Pinterest",
    idLabel: "App ID",
    secretLabel: "App secret key",
    scopes: ["boards:read", "pins:read", "pins:write"],
    products: ["Pinterest API v5 (trial access first, then standard access)"],
    consoleUrl: "https://developers.pinterest.com/apps/",
    demands: [
      "A Pinterest business account is needed to create the app.",
      "New apps get trial access, which Pinterest limits; apply for standard access in the app's page before real use.",
    ],
    steps: [
      "Sign in at developers.pinterest.com with a business account and press Connect app; fill in the form and accept the terms.",
      "Once Pinterest grants trial access, open the app and add {redirect} under Redirect URIs.",
      "Copy the App ID and the App secret key into the fields below.",
      "Apply for standard access from the app's page when you are ready to post for real.",
    ],
  },
};
