/**
 * The words the caption writer puts around the seed's own sentences: openers and questions per category and
 * register, and emoji per category. No closing lines: a closer the seed did not ask for ("Thanks for reading.",
 * "More soon!") is filler (decisions.md §15). Data only. English only: for another language the writer
 * uses the seed's sentences without these.
 */

export const CATEGORIES = ["announcement", "tip", "question", "story", "event", "product", "other"] as const;
export type Category = (typeof CATEGORIES)[number];

export const REGISTERS = ["formal", "neutral", "casual"] as const;
export type Register = (typeof REGISTERS)[number];

/** An opener used with the title (`{title}`) and a plain one used when the body already says the title. */
export interface Opener {
  withTitle: string;
  plain: string;
}

type PerRegister<T> = Record<Register, T[]>;

export const OPENERS: Record<Category, PerRegister<Opener>> = {
  announcement: {
    formal: [
      { withTitle: "Announcing: {title}.", plain: "An announcement." },
      { withTitle: "We are pleased to share: {title}.", plain: "We are pleased to share some news." },
      { withTitle: "News: {title}.", plain: "Some news to share." },
      { withTitle: "Introducing: {title}.", plain: "Introducing something new." },
    ],
    neutral: [
      { withTitle: "News: {title}", plain: "Some news to share." },
      { withTitle: "It's here: {title}", plain: "It's here." },
      { withTitle: "Announcing: {title}", plain: "We have an announcement." },
      { withTitle: "Introducing: {title}", plain: "Introducing something new." },
    ],
    casual: [
      { withTitle: "Big news: {title}!", plain: "Big news!" },
      { withTitle: "It's finally here: {title}!", plain: "It's finally here!" },
      { withTitle: "Guess what? {title}!", plain: "Guess what?" },
      { withTitle: "We've been waiting to tell you: {title}!", plain: "We've been waiting to tell you this!" },
    ],
  },
  tip: {
    formal: [
      { withTitle: "A recommendation: {title}.", plain: "A recommendation." },
      { withTitle: "Best practice: {title}.", plain: "A best practice worth sharing." },
      { withTitle: "Guidance: {title}.", plain: "Some practical guidance." },
      { withTitle: "Worth knowing: {title}.", plain: "Something worth knowing." },
    ],
    neutral: [
      { withTitle: "Quick tip: {title}", plain: "Quick tip." },
      { withTitle: "Tip of the day: {title}", plain: "Tip of the day." },
      { withTitle: "Try this: {title}", plain: "Try this." },
      { withTitle: "Worth knowing: {title}", plain: "Something worth knowing." },
    ],
    casual: [
      { withTitle: "Quick tip: {title}!", plain: "Quick tip!" },
      { withTitle: "Here's a trick we love: {title}", plain: "Here's a trick we love." },
      { withTitle: "Save this one: {title}", plain: "Save this one!" },
      { withTitle: "Little tip, big difference: {title}", plain: "Little tip, big difference." },
    ],
  },
  question: {
    formal: [
      { withTitle: "A question for you: {title}", plain: "A question for you." },
      { withTitle: "We would value your view: {title}", plain: "We would value your view." },
      { withTitle: "Consider this: {title}", plain: "Consider this." },
      { withTitle: "Your input, please: {title}", plain: "Your input, please." },
    ],
    neutral: [
      { withTitle: "Question for you: {title}", plain: "Question for you." },
      { withTitle: "We're curious: {title}", plain: "We're curious." },
      { withTitle: "Let's hear it: {title}", plain: "Let's hear it." },
      { withTitle: "Quick question: {title}", plain: "Quick question." },
    ],
    casual: [
      { withTitle: "Okay, real talk: {title}", plain: "Okay, real talk." },
      { withTitle: "Settle this for us: {title}", plain: "Settle this for us!" },
      { withTitle: "We need to know: {title}", plain: "We need to know!" },
      { withTitle: "Quick poll: {title}", plain: "Quick poll!" },
    ],
  },
  story: {
    formal: [
      { withTitle: "{title}.", plain: "A story worth telling." },
      { withTitle: "From our journey: {title}.", plain: "From our journey." },
      { withTitle: "Behind the work: {title}.", plain: "Behind the work." },
      { withTitle: "A reflection: {title}.", plain: "A reflection." },
    ],
    neutral: [
      { withTitle: "{title}", plain: "A little story." },
      { withTitle: "Story time: {title}", plain: "Story time." },
      { withTitle: "Behind the scenes: {title}", plain: "Behind the scenes." },
      { withTitle: "How it happened: {title}", plain: "How it happened." },
    ],
    casual: [
      { withTitle: "Story time: {title}", plain: "Story time!" },
      { withTitle: "You won't believe this one: {title}", plain: "You won't believe this one." },
      { withTitle: "A little behind-the-scenes: {title}", plain: "A little behind-the-scenes." },
      { withTitle: "So, this happened: {title}", plain: "So, this happened." },
    ],
  },
  event: {
    formal: [
      { withTitle: "You are invited: {title}.", plain: "You are invited." },
      { withTitle: "Save the date: {title}.", plain: "Save the date." },
      { withTitle: "Upcoming event: {title}.", plain: "An upcoming event." },
      { withTitle: "Join us: {title}.", plain: "Join us." },
    ],
    neutral: [
      { withTitle: "Save the date: {title}", plain: "Save the date." },
      { withTitle: "Join us for {title}", plain: "Join us." },
      { withTitle: "Coming up: {title}", plain: "Coming up soon." },
      { withTitle: "Mark your calendar: {title}", plain: "Mark your calendar." },
    ],
    casual: [
      { withTitle: "Save the date: {title}!", plain: "Save the date!" },
      { withTitle: "Come hang out with us: {title}!", plain: "Come hang out with us!" },
      { withTitle: "Don't miss it: {title}!", plain: "Don't miss it!" },
      { withTitle: "See you there? {title}", plain: "See you there?" },
    ],
  },
  product: {
    formal: [
      { withTitle: "Introducing: {title}.", plain: "Introducing our latest product." },
      { withTitle: "Now available: {title}.", plain: "Now available." },
      { withTitle: "Designed for you: {title}.", plain: "Designed for you." },
      { withTitle: "Presenting {title}.", plain: "Presenting something new." },
    ],
    neutral: [
      { withTitle: "Meet {title}", plain: "Meet our newest product." },
      { withTitle: "Now available: {title}", plain: "Now available." },
      { withTitle: "New: {title}", plain: "Something new." },
      { withTitle: "Say hello to {title}", plain: "Say hello to something new." },
    ],
    casual: [
      { withTitle: "Say hello to {title}!", plain: "Say hello to our newest thing!" },
      { withTitle: "Fresh drop: {title}!", plain: "Fresh drop!" },
      { withTitle: "You asked, we made it: {title}!", plain: "You asked, we made it!" },
      { withTitle: "New favourite alert: {title}!", plain: "New favourite alert!" },
    ],
  },
  other: {
    formal: [
      { withTitle: "{title}.", plain: "An update." },
      { withTitle: "An update: {title}.", plain: "An update." },
      { withTitle: "Of note: {title}.", plain: "Of note." },
      { withTitle: "For your attention: {title}.", plain: "For your attention." },
    ],
    neutral: [
      { withTitle: "{title}", plain: "An update." },
      { withTitle: "Update: {title}", plain: "A quick update." },
      { withTitle: "Worth a look: {title}", plain: "Worth a look." },
      { withTitle: "In case you missed it: {title}", plain: "In case you missed it." },
    ],
    casual: [
      { withTitle: "Heads up: {title}!", plain: "Heads up!" },
      { withTitle: "Psst: {title}", plain: "Psst!" },
      { withTitle: "Quick one: {title}", plain: "Quick one!" },
      { withTitle: "Okay, so: {title}", plain: "Okay, so." },
    ],
  },
};

/** Questions added on "add a question" (and to end question posts); rotated by variant. */
export const QUESTIONS: Record<Category, PerRegister<string>> = {
  announcement: {
    formal: ["What would you like to see next?", "How do you plan to use it?"],
    neutral: ["What do you think?", "What would you like to see next?"],
    casual: ["What do you think?", "Who's excited?"],
  },
  tip: {
    formal: ["Which practices have worked best for you?", "How do you approach this?"],
    neutral: ["Have you tried this?", "What's your go-to tip?"],
    casual: ["Have you tried this yet?", "What's your best trick?"],
  },
  question: {
    formal: ["What is your view?", "How would you answer?"],
    neutral: ["What's your take?", "How would you answer?"],
    casual: ["What's your take?", "Which side are you on?"],
  },
  story: {
    formal: ["Have you experienced something similar?", "What has shaped your own work?"],
    neutral: ["Has this happened to you?", "What's your story?"],
    casual: ["Has this ever happened to you?", "What's your story?"],
  },
  event: {
    formal: ["Will you be joining us?", "Which session interests you most?"],
    neutral: ["Will we see you there?", "Who are you bringing?"],
    casual: ["Who's coming?", "Are you in?"],
  },
  product: {
    formal: ["Which feature matters most to you?", "How would you use it?"],
    neutral: ["What would you use it for?", "Which feature are you trying first?"],
    casual: ["Would you try it?", "Which one's your favourite?"],
  },
  other: {
    formal: ["What is your view?", "How does this affect you?"],
    neutral: ["What do you think?", "Thoughts?"],
    casual: ["Thoughts?", "What do you think?"],
  },
};

/** Emoji per category; "some" uses one, "lots" several, rotated by variant. */
export const EMOJI: Record<Category, string[]> = {
  announcement: ["🎉", "📣", "✨", "🚀", "🙌"],
  tip: ["💡", "✅", "📝", "👉", "⚡"],
  question: ["🤔", "💬", "👇", "❓", "🗳️"],
  story: ["📖", "💛", "🌱", "✨", "🙏"],
  event: ["📅", "📍", "🎟️", "🎉", "⏰"],
  product: ["🛍️", "✨", "🔥", "📦", "😍"],
  other: ["👋", "✨", "📌", "💬", "🙌"],
};

/** Tone words (from the brand voice) that pick a register; anything else is neutral. */
export const FORMAL_TONES = ["formal", "professional", "serious", "corporate", "authoritative", "polished", "academic", "official", "measured", "reserved", "respectful"];
export const CASUAL_TONES = ["casual", "playful", "fun", "relaxed", "witty", "cheerful", "enthusiastic", "excited", "bubbly", "cheeky", "quirky", "warm", "upbeat", "chatty", "lighthearted"];
