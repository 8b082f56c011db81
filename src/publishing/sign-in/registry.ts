/** The networks connected by sign-in, by platform, in one place. Issue 26's networks add their declaration here. */
import type { ConnectionPlatform } from "../../db/schema/connections";
import { mastodonSignIn } from "../networks/mastodon/sign-in";
import type { SignInNetwork } from "./network";
import { xSignIn } from "../networks/x/sign-in";
import { linkedinSignIn } from "../networks/linkedin/sign-in";
import { pinterestSignIn } from "../networks/pinterest/sign-in";
import { instagramSignIn } from "../networks/instagram/sign-in";
import { facebookSignIn } from "../networks/facebook/sign-in";
import { threadsSignIn } from "../networks/threads/sign-in";

const SIGN_IN_NETWORKS: Partial<Record<ConnectionPlatform, SignInNetwork>> = {
  mastodon: mastodonSignIn,
  x: xSignIn,
  linkedin: linkedinSignIn,
  pinterest: pinterestSignIn,
  instagram: instagramSignIn,
  facebook: facebookSignIn,
  threads: threadsSignIn,
};

/** The sign-in declaration of `platform`, or null when that network is not connected by sign-in. */
export function signInNetworkFor(platform: string): SignInNetwork | null {
  return (SIGN_IN_NETWORKS as Record<string, SignInNetwork | undefined>)[platform] ?? null;
}
