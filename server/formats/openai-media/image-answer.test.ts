import { describe, expect, it } from 'vitest';
import { encodeImagesResponse, encodeImageToolAnswer, type GeneratedImageAnswer } from './image-answer.js';

const png = (bytes: number) => ({ data: new Uint8Array(bytes), mediaType: 'image/png' });

function generated(data: GeneratedImageAnswer['data'], revisedPrompt?: string): GeneratedImageAnswer {
  return {
    result: {
      images: data.map((item) => item.image),
      width: 640,
      height: 480,
      revisedPrompt,
      usage: { images: data.length, pixels: 640 * 480 * data.length },
    },
    model: 'local:image',
    format: 'png',
    data,
    created: 1_763_779_200_500,
  };
}

describe('the image answer, one description for the route and the tool', () => {
  it('REST: links or base64 as asked, size and format of the generation, created in seconds', () => {
    const body = encodeImagesResponse(
      generated(
        [
          { url: 'https://g.example/v1/media/a', image: png(3) },
          { b64_json: 'AAAA', image: png(3) },
        ],
        'a red boat',
      ),
    );
    expect(body).toEqual({
      created: 1_763_779_200,
      data: [
        { url: 'https://g.example/v1/media/a', revised_prompt: 'a red boat' },
        { b64_json: 'AAAA', revised_prompt: 'a red boat' },
      ],
      output_format: 'png',
      size: '640x480',
    });
  });

  it('the tool: the same size, format, prompt and links, with each image’s bytes, and a text listing the links', () => {
    const answer = encodeImageToolAnswer(
      generated([
        { url: 'https://g.example/v1/media/a', image: png(7) },
        { url: 'https://g.example/v1/media/b', image: png(9) },
      ]),
    );
    expect(answer.output).toEqual({
      model: 'local:image',
      size: '640x480',
      format: 'png',
      revised_prompt: null,
      images: [
        { url: 'https://g.example/v1/media/a', media_type: 'image/png', bytes: 7 },
        { url: 'https://g.example/v1/media/b', media_type: 'image/png', bytes: 9 },
      ],
    });
    expect(answer.text).toBe(
      'Generated 2 640x480 PNG images with local:image:\nhttps://g.example/v1/media/a\nhttps://g.example/v1/media/b',
    );
  });
});
