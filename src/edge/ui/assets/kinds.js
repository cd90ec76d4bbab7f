// The four kinds of generation: the value, its label, and the mutation and input type that submit it.

/** [kind, label, mutation, input type] */
export const kinds = [
  ['image', 'Image', 'generateImage', 'GenerateImageInput'],
  ['video', 'Video', 'generateVideo', 'GenerateVideoInput'],
  ['speech', 'Speech', 'generateSpeech', 'GenerateSpeechInput'],
  ['avatar', 'Avatar video', 'generateAvatarVideo', 'GenerateAvatarVideoInput'],
];
export const kindLabel = Object.fromEntries(kinds.map(([kind, label]) => [kind, label]));
