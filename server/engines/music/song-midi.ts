/**
 * A composed song → a format-1 Standard MIDI File built with spessasynth's `MIDIBuilder`: a conductor track
 * with the tempo, then one track per part with its program, level, pan and reverb send before its notes.
 * Format 1 because the builder refuses a second track in format 0.
 */
import { MIDIBuilder } from 'spessasynth_core';
import { TICKS_PER_BEAT, type Song } from './compose.js';

const CC_VOLUME = 7;
const CC_PAN = 10;
const CC_REVERB = 91;

export function songToMidi(song: Song): MIDIBuilder {
  const midi = new MIDIBuilder({
    timeDivision: TICKS_PER_BEAT,
    initialTempo: song.tempo,
    format: 1,
    name: 'omnigate local:music',
  });
  song.parts.forEach((part, index) => {
    const track = index + 1;
    midi.addTrack(part.name);
    if (part.channel !== 9) {
      midi.programChange(0, track, part.channel, part.program);
    }
    midi.controllerChange(0, track, part.channel, CC_VOLUME, part.volume);
    midi.controllerChange(0, track, part.channel, CC_PAN, part.pan);
    midi.controllerChange(0, track, part.channel, CC_REVERB, part.reverb);
    for (const note of part.notes) {
      midi.noteOn(note.tick, track, part.channel, note.pitch, note.velocity);
      midi.noteOff(note.tick + note.duration, track, part.channel, note.pitch);
    }
  });
  // The builder appends events as given; flush sorts them per track and computes the song's timing.
  midi.flush();
  return midi;
}
